package ipc

import "github.com/zqagent/sidecar/backend"

// projectRoutes: project.* and worktree.* (the backend's project.go,
// project_settings.go, git_trust.go and worktree_methods.go).
func projectRoutes() map[string]handler {
	return map[string]handler{
		"project.open":        call((*backend.Backend).OpenProject),
		"project.close":       call((*backend.Backend).CloseProject),
		"project.list":        call((*backend.Backend).Projects),
		"project.setSettings": call((*backend.Backend).SetProjectSettings),
		"project.trustGit":    call((*backend.Backend).TrustGit),
		"project.untrustGit":  call((*backend.Backend).UntrustGit),
		"worktree.list":       call((*backend.Backend).Worktrees),
		"worktree.create":     call((*backend.Backend).CreateWorktree),
		"worktree.remove":     call((*backend.Backend).RemoveWorktree),
	}
}
