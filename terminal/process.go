package terminal

// spawnSpec is what the platform layer starts.
type spawnSpec struct {
	Path string   // program, resolved
	Args []string // argv without argv[0]
	Dir  string
	Env  []string
	Cols uint16
	Rows uint16
}

// ptyProcess is a child process on a pseudo-terminal (pty_unix.go,
// pty_windows.go). Read and Write may be called concurrently with each other
// and with the other methods; Close unblocks them.
type ptyProcess interface {
	// Read reads output from the terminal; it fails once the terminal is
	// closed or (on Unix) every process holding its slave side has gone.
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Resize(cols, rows uint16) error
	Pid() int
	// Wait blocks until the child exits and returns its exit code (128+n
	// for death by signal n on Unix).
	Wait() (int, error)
	// Terminate asks every process of the terminal to exit (SIGHUP and
	// SIGTERM to its process group and session).
	Terminate() error
	// KillAll forcibly kills every process of the terminal that is left.
	KillAll() error
	// Alive reports whether any process of the terminal is left.
	Alive() bool
	// Foreground names the command in the terminal's foreground, when known.
	Foreground() string
	// Close releases the terminal; later Reads and Writes fail.
	Close() error
}
