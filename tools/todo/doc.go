// Package todo owns the todo_write tool and the TodoList it writes: the
// model's task list for the current session, which the UI reads (Items) or
// follows (OnChange).
//
// Concurrency: a TodoList is safe for concurrent use. OnChange calls are
// serialized and run in the order of the changes, outside the list's data
// lock (a hook may call Items, but must not call Set).
package todo
