package todo

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Status is the state of a todo item.
type Status string

// Statuses.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
)

func (s Status) String() string { return string(s) }

// Priority levels ("" means unset).
const (
	PriorityHigh   = "high"
	PriorityMedium = "medium"
	PriorityLow    = "low"
)

// MaxItems caps a list.
const MaxItems = 100

// Item is one entry of the list.
type Item struct {
	ID       string `json:"id" jsonschema_description:"Stable identifier of the item."`
	Content  string `json:"content" jsonschema:"required" jsonschema_description:"What to do."`
	Status   Status `json:"status" jsonschema:"required,enum=pending,enum=in_progress,enum=completed"`
	Priority string `json:"priority,omitempty" jsonschema:"enum=high,enum=medium,enum=low"`
}

// TodoList is a session's task list. The zero value is an empty list.
type TodoList struct {
	// OnChange, when set, receives a copy of the list after every Set. Set
	// it before the list is shared.
	OnChange func([]Item)

	notifyMu sync.Mutex // serializes Set + OnChange; taken before mu
	mu       sync.RWMutex
	items    []Item // guarded by mu
}

// Items returns a copy of the list.
func (l *TodoList) Items() []Item {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append([]Item(nil), l.items...)
}

// Set replaces the list (the items as given, not validated; see Validate)
// and calls OnChange.
func (l *TodoList) Set(items []Item) {
	l.notifyMu.Lock()
	defer l.notifyMu.Unlock()
	cp := append([]Item(nil), items...)
	l.mu.Lock()
	l.items = cp
	l.mu.Unlock()
	if l.OnChange != nil {
		l.OnChange(append([]Item(nil), cp...))
	}
}

// Validate normalizes items in place (trimmed content, lowercased status
// and priority, missing ids numbered by position) and checks them: content
// required, known status and priority, unique ids, at most one item in
// progress, at most MaxItems. Errors wrap ErrInvalidTodo.
func Validate(items []Item) error {
	if len(items) > MaxItems {
		return fmt.Errorf("%w: %d items, at most %d", ErrInvalidTodo, len(items), MaxItems)
	}
	seen := map[string]bool{}
	inProgress := 0
	for i := range items {
		it := &items[i]
		it.ID = strings.TrimSpace(it.ID)
		it.Content = strings.TrimSpace(it.Content)
		it.Status = Status(strings.ToLower(strings.TrimSpace(string(it.Status))))
		it.Priority = strings.ToLower(strings.TrimSpace(it.Priority))
		if it.ID == "" {
			it.ID = strconv.Itoa(i + 1)
		}
		if it.Content == "" {
			return fmt.Errorf("%w: item %d has no content", ErrInvalidTodo, i+1)
		}
		switch it.Status {
		case "":
			it.Status = StatusPending
		case StatusPending, StatusCompleted:
		case StatusInProgress:
			inProgress++
		default:
			return fmt.Errorf("%w: item %d: status %q is not pending, in_progress or completed", ErrInvalidTodo, i+1, it.Status)
		}
		switch it.Priority {
		case "", PriorityHigh, PriorityMedium, PriorityLow:
		default:
			return fmt.Errorf("%w: item %d: priority %q is not high, medium or low", ErrInvalidTodo, i+1, it.Priority)
		}
		if seen[it.ID] {
			return fmt.Errorf("%w: duplicate id %q", ErrInvalidTodo, it.ID)
		}
		seen[it.ID] = true
	}
	if inProgress > 1 {
		return fmt.Errorf("%w: %d items are in_progress; keep exactly one task in progress at a time", ErrInvalidTodo, inProgress)
	}
	return nil
}

// Render formats the list as a Markdown checklist with a summary line.
func Render(items []Item) string {
	if len(items) == 0 {
		return "Todo list is empty."
	}
	var b strings.Builder
	done := 0
	for _, it := range items {
		mark := "[ ]"
		switch it.Status {
		case StatusCompleted:
			mark = "[x]"
			done++
		case StatusInProgress:
			mark = "[~]"
		}
		fmt.Fprintf(&b, "- %s %s", mark, it.Content)
		if it.Priority != "" {
			fmt.Fprintf(&b, " (%s)", it.Priority)
		}
		fmt.Fprintf(&b, " [id: %s]\n", it.ID)
	}
	fmt.Fprintf(&b, "\n%d of %d completed.", done, len(items))
	return b.String()
}
