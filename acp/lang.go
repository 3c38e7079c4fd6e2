package acp

// cardText is the text this front door writes itself on the questions it
// puts to the editor (plan and directory requests), in a session's
// language; the rest of a card is the model's or the tool's.
type cardText struct {
	approvePlan, rejectPlan string
	grantAccess             string // %s: read-only or read-write; %s: the path
	readOnly, readWrite     string
	grant, refuse           string
}

// cardTexts are the six session languages (engine.PromptLangs); another
// language gets English.
var cardTexts = map[string]cardText{
	"en":    {"Approve the plan", "Reject the plan", "Grant %s access to %s", "read-only", "read-write", "Grant access", "Refuse"},
	"zh":    {"批准计划", "拒绝计划", "授予对 %[2]s 的%[1]s权限", "只读", "读写", "授予访问权限", "拒绝"},
	"zh-TW": {"核准計畫", "拒絕計畫", "授予對 %[2]s 的%[1]s權限", "唯讀", "讀寫", "授予存取權限", "拒絕"},
	"ja":    {"計画を承認する", "計画を却下する", "%[2]s への%[1]sアクセスを許可する", "読み取り専用", "読み書き", "アクセスを許可する", "拒否する"},
	"ko":    {"계획 승인", "계획 거부", "%[2]s에 대한 %[1]s 접근 허용", "읽기 전용", "읽기/쓰기", "접근 허용", "거부"},
	"es":    {"Aprobar el plan", "Rechazar el plan", "Conceder acceso de %s a %s", "solo lectura", "lectura y escritura", "Conceder acceso", "Rechazar"},
}

func cardTextOf(lang string) cardText {
	if t, ok := cardTexts[lang]; ok {
		return t
	}
	return cardTexts["en"]
}
