package todo

import "errors"

// ErrInvalidTodo: a todo item is malformed (empty content, unknown status or
// priority, duplicate id, more than one item in progress, too many items).
var ErrInvalidTodo = errors.New("invalid todo list")
