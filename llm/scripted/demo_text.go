package scripted

import "fmt"

// demoText is the demo provider's text in one language: what it says, the
// question it asks, the summary it writes and the session names it gives.
// The format verbs are the ones demoAnswer and demoSummary pass.
type demoText struct {
	reasoning, greeting, again, listed, question, ask string
	options                                           [3]string
	summary, listFailed, listFound, gitNotRun         string
	gitFailed, gitClean, gitChanged, answered, end    string
	unknown, name, newSession                         string
	entries, paths                                    func(n int) string
}

// counted is a count phrase with the one and many forms of a language.
func counted(one, many string) func(int) string {
	return func(n int) string {
		if n == 1 {
			return fmt.Sprintf(one, n)
		}
		return fmt.Sprintf(many, n)
	}
}

// demoTexts are the demo's six languages (engine.PromptLangs); an unknown
// language gets English.
var demoTexts = map[string]demoText{
	"en": {
		reasoning: "The user wrote something. As the demo I show a tool call first.",
		greeting: "Hi! I am the scripted demo provider: no API key is configured, so no real model answers. " +
			"I will walk through a few tools so you can see how a turn looks. First, the files here.",
		again:      "This is the scripted demo provider. Send a message to see the demo again.",
		listed:     "I see %s. Now the git status; in interactive mode this command asks for your approval.",
		question:   "Now a question for you.",
		ask:        "What would you like to do next?",
		options:    [3]string{"Explain the project layout", "Review the uncommitted changes", "Nothing for now"},
		summary:    "Here is what the tools returned:\n\n",
		listFailed: "- list_files failed: %s\n",
		listFound:  "- list_files found %s in the workspace.\n",
		gitNotRun:  "- git status did not run: %s\n",
		gitFailed:  "- git status failed (exit code %d): %s\n",
		gitClean:   "- git status reports a clean working tree.\n",
		gitChanged: "- git status lists %s.\n",
		answered:   "- You answered: \"%s\".\n\n",
		end:        "That is the end of the demo. To talk to a real model, configure an API key.",
		unknown:    "The demo only scripts list_files, run_shell and ask_user; that tool result ends it.",
		name:       "Demo: %s",
		newSession: "New session",
		entries:    counted("%d entry", "%d entries"),
		paths:      counted("%d changed path", "%d changed paths"),
	},
	"zh": {
		reasoning:  "用户写了些内容。作为演示，我先展示一次工具调用。",
		greeting:   "你好！我是脚本化的演示提供方：尚未配置 API 密钥，所以不会有真正的模型回答。我会依次演示几个工具，让你看看一轮对话是什么样子。先看看这里的文件。",
		again:      "这是脚本化的演示提供方。发送一条消息即可再次观看演示。",
		listed:     "我看到了 %s。接下来是 git status；在交互模式下，这条命令会请求你的批准。",
		question:   "现在有个问题想问你。",
		ask:        "接下来你想做什么？",
		options:    [3]string{"讲解项目结构", "审查未提交的更改", "暂时不用"},
		summary:    "以下是工具返回的结果：\n\n",
		listFailed: "- list_files 失败：%s\n",
		listFound:  "- list_files 在工作区中找到 %s。\n",
		gitNotRun:  "- git status 未能运行：%s\n",
		gitFailed:  "- git status 失败（退出码 %d）：%s\n",
		gitClean:   "- git status 显示工作区是干净的。\n",
		gitChanged: "- git status 列出了 %s。\n",
		answered:   "- 你的回答：“%s”。\n\n",
		end:        "演示到此结束。要与真正的模型对话，请配置 API 密钥。",
		unknown:    "演示只编排了 list_files、run_shell 和 ask_user；这个工具结果结束了演示。",
		name:       "演示：%s",
		newSession: "新会话",
		entries:    counted("%d 个条目", "%d 个条目"),
		paths:      counted("%d 个已更改的路径", "%d 个已更改的路径"),
	},
	"zh-TW": {
		reasoning:  "使用者寫了些內容。作為示範，我先展示一次工具呼叫。",
		greeting:   "你好！我是腳本化的示範提供者：尚未設定 API 金鑰，所以不會有真正的模型回答。我會依序示範幾個工具，讓你看看一輪對話的樣子。先看看這裡的檔案。",
		again:      "這是腳本化的示範提供者。傳送一則訊息即可再次觀看示範。",
		listed:     "我看到了 %s。接下來是 git status；在互動模式下，這個指令會請求你的核准。",
		question:   "現在有個問題想問你。",
		ask:        "接下來你想做什麼？",
		options:    [3]string{"說明專案結構", "審查尚未提交的變更", "暫時不用"},
		summary:    "以下是工具傳回的結果：\n\n",
		listFailed: "- list_files 失敗：%s\n",
		listFound:  "- list_files 在工作區中找到 %s。\n",
		gitNotRun:  "- git status 未能執行：%s\n",
		gitFailed:  "- git status 失敗（結束代碼 %d）：%s\n",
		gitClean:   "- git status 顯示工作樹是乾淨的。\n",
		gitChanged: "- git status 列出了 %s。\n",
		answered:   "- 你的回答：「%s」。\n\n",
		end:        "示範到此結束。若要與真正的模型對話，請設定 API 金鑰。",
		unknown:    "示範只編排了 list_files、run_shell 與 ask_user；這個工具結果結束了示範。",
		name:       "示範：%s",
		newSession: "新工作階段",
		entries:    counted("%d 個項目", "%d 個項目"),
		paths:      counted("%d 個已變更的路徑", "%d 個已變更的路徑"),
	},
	"ja": {
		reasoning:  "ユーザーが何か書きました。デモとして、まずツール呼び出しを見せます。",
		greeting:   "こんにちは！スクリプトで動くデモプロバイダーです。API キーが設定されていないため、本物のモデルは応答しません。ターンの様子がわかるよう、いくつかのツールを順に使ってみます。まずはここにあるファイルから。",
		again:      "これはスクリプトで動くデモプロバイダーです。もう一度デモを見るにはメッセージを送ってください。",
		listed:     "%s が見つかりました。次は git status です。対話モードでは、このコマンドはあなたの承認を求めます。",
		question:   "では、あなたに質問です。",
		ask:        "次に何をしますか？",
		options:    [3]string{"プロジェクトの構成を説明する", "未コミットの変更をレビューする", "今は何もしない"},
		summary:    "ツールの結果は次のとおりです：\n\n",
		listFailed: "- list_files は失敗しました：%s\n",
		listFound:  "- list_files はワークスペースに %s を見つけました。\n",
		gitNotRun:  "- git status は実行されませんでした：%s\n",
		gitFailed:  "- git status は失敗しました（終了コード %d）：%s\n",
		gitClean:   "- git status によると、作業ツリーはクリーンです。\n",
		gitChanged: "- git status は %s を示しています。\n",
		answered:   "- あなたの回答：「%s」\n\n",
		end:        "デモはここまでです。本物のモデルと話すには API キーを設定してください。",
		unknown:    "デモがスクリプト化しているのは list_files、run_shell、ask_user だけです。このツール結果でデモは終わります。",
		name:       "デモ：%s",
		newSession: "新しいセッション",
		entries:    counted("%d 個の項目", "%d 個の項目"),
		paths:      counted("%d 個の変更されたパス", "%d 個の変更されたパス"),
	},
	"ko": {
		reasoning:  "사용자가 무언가를 적었습니다. 데모로서 먼저 도구 호출을 보여 줍니다.",
		greeting:   "안녕하세요! 저는 스크립트로 동작하는 데모 제공자입니다. API 키가 설정되지 않아 실제 모델은 답하지 않습니다. 한 턴이 어떻게 보이는지 알 수 있도록 몇 가지 도구를 차례로 써 보겠습니다. 먼저 여기 있는 파일부터요.",
		again:      "스크립트로 동작하는 데모 제공자입니다. 데모를 다시 보려면 메시지를 보내세요.",
		listed:     "%s을(를) 찾았습니다. 이제 git status입니다. 대화형 모드에서는 이 명령이 승인을 요청합니다.",
		question:   "이제 질문이 하나 있습니다.",
		ask:        "다음에 무엇을 할까요?",
		options:    [3]string{"프로젝트 구조 설명하기", "커밋되지 않은 변경 검토하기", "지금은 아무것도 안 하기"},
		summary:    "도구가 돌려준 결과는 다음과 같습니다:\n\n",
		listFailed: "- list_files 실패: %s\n",
		listFound:  "- list_files가 작업 공간에서 %s을(를) 찾았습니다.\n",
		gitNotRun:  "- git status가 실행되지 않았습니다: %s\n",
		gitFailed:  "- git status 실패(종료 코드 %d): %s\n",
		gitClean:   "- git status에 따르면 작업 트리가 깨끗합니다.\n",
		gitChanged: "- git status가 %s을(를) 나열합니다.\n",
		answered:   "- 당신의 답: \"%s\".\n\n",
		end:        "데모는 여기까지입니다. 실제 모델과 대화하려면 API 키를 설정하세요.",
		unknown:    "데모는 list_files, run_shell, ask_user만 스크립트로 다룹니다. 이 도구 결과로 데모가 끝납니다.",
		name:       "데모: %s",
		newSession: "새 세션",
		entries:    counted("항목 %d개", "항목 %d개"),
		paths:      counted("변경된 경로 %d개", "변경된 경로 %d개"),
	},
	"es": {
		reasoning: "El usuario escribió algo. Como demo, primero muestro una llamada a una herramienta.",
		greeting: "¡Hola! Soy el proveedor de demostración con guion: no hay ninguna clave de API configurada, así que no responde ningún modelo real. " +
			"Recorreré algunas herramientas para que veas cómo es un turno. Primero, los archivos de aquí.",
		again:      "Este es el proveedor de demostración con guion. Envía un mensaje para ver la demo de nuevo.",
		listed:     "Veo %s. Ahora el estado de git; en modo interactivo este comando pide tu aprobación.",
		question:   "Ahora una pregunta para ti.",
		ask:        "¿Qué te gustaría hacer ahora?",
		options:    [3]string{"Explicar la estructura del proyecto", "Revisar los cambios sin confirmar", "Nada por ahora"},
		summary:    "Esto es lo que devolvieron las herramientas:\n\n",
		listFailed: "- list_files falló: %s\n",
		listFound:  "- list_files encontró %s en el espacio de trabajo.\n",
		gitNotRun:  "- git status no se ejecutó: %s\n",
		gitFailed:  "- git status falló (código de salida %d): %s\n",
		gitClean:   "- git status indica un árbol de trabajo limpio.\n",
		gitChanged: "- git status muestra %s.\n",
		answered:   "- Respondiste: «%s».\n\n",
		end:        "Aquí termina la demo. Para hablar con un modelo real, configura una clave de API.",
		unknown:    "La demo solo tiene guion para list_files, run_shell y ask_user; ese resultado de herramienta la termina.",
		name:       "Demo: %s",
		newSession: "Sesión nueva",
		entries:    counted("%d entrada", "%d entradas"),
		paths:      counted("%d ruta modificada", "%d rutas modificadas"),
	},
}

// demoTextOf is the demo's text in lang (one of the six; else English).
func demoTextOf(lang string) demoText {
	if t, ok := demoTexts[lang]; ok {
		return t
	}
	return demoTexts["en"]
}
