package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// table collects the printed figures, in order.
type table struct {
	rows   [][3]string // figure, value, goal
	series []string    // the long session's lines
}

func (t *table) add(figure, value, goal string) {
	t.rows = append(t.rows, [3]string{figure, value, goal})
}

func (t *table) print(w io.Writer) {
	wide := len("figure")
	for _, r := range t.rows {
		wide = max(wide, len(r[0]))
	}
	fmt.Fprintf(w, "| %-*s | %s | %s |\n", wide, "figure", "median", "goal")
	fmt.Fprintf(w, "|-%s-|---|---|\n", dashes(wide))
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %-*s | %s | %s |\n", wide, r[0], r[1], r[2])
	}
	if len(t.series) > 0 {
		fmt.Fprintln(w)
		for _, s := range t.series {
			fmt.Fprintln(w, s)
		}
	}
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
