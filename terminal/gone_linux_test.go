package terminal

import (
	"os"
	"strconv"
)

// gone reports whether pid has exited (a zombie has).
func gone(pid int) bool {
	_, state, ok := procSession(pid)
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return !ok && err != nil || ok && state == 'Z'
}
