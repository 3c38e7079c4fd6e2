//go:build windows

package terminal

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// conPTY is a child on a Windows pseudo console (ConPTY, Windows 10 1809
// and later). Its processes live in a job object, which stands in for the
// Unix process group: KillAll terminates the job, and closing the job handle
// kills whatever is left (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), even if the
// sidecar dies.
type conPTY struct {
	in      *os.File // write end of the console's input pipe
	out     *os.File // read end of the console's output pipe
	pid     int
	process windows.Handle // closed by Wait

	mu      sync.Mutex // guards console, job, closed
	console windows.Handle
	job     windows.Handle
	closed  bool
}

// conptyAvailable: x/sys panics when a kernel32 function is missing, so
// look before the first call (ConPTY needs Windows 10 1809 or later).
var conptyAvailable = sync.OnceValue(func() bool {
	return windows.NewLazySystemDLL("kernel32.dll").NewProc("CreatePseudoConsole").Find() == nil
})

func startPTY(s spawnSpec) (ptyProcess, error) {
	if !conptyAvailable() {
		return nil, fmt.Errorf("%w: this Windows has no ConPTY (needs Windows 10 1809 or later)", ErrUnsupported)
	}
	var inR, inW, outR, outW windows.Handle
	if err := windows.CreatePipe(&inR, &inW, nil, 0); err != nil {
		return nil, fmt.Errorf("terminal input pipe: %w", err)
	}
	if err := windows.CreatePipe(&outR, &outW, nil, 0); err != nil {
		_ = windows.CloseHandle(inR)
		_ = windows.CloseHandle(inW)
		return nil, fmt.Errorf("terminal output pipe: %w", err)
	}
	p := &conPTY{in: os.NewFile(uintptr(inW), "conpty-in"), out: os.NewFile(uintptr(outR), "conpty-out")}
	err := windows.CreatePseudoConsole(coord(s.Cols, s.Rows), inR, outW, 0, &p.console)
	// The console holds its own copies of its pipe ends.
	_ = windows.CloseHandle(inR)
	_ = windows.CloseHandle(outW)
	if err != nil {
		_ = p.in.Close()
		_ = p.out.Close()
		return nil, fmt.Errorf("%w: CreatePseudoConsole: %v", ErrUnsupported, err)
	}
	if err := p.spawn(s); err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	return p, nil
}

func coord(cols, rows uint16) windows.Coord {
	return windows.Coord{X: int16(min(cols, 32767)), Y: int16(min(rows, 32767))}
}

// spawn starts the program suspended, puts it in a fresh job and resumes it,
// so that every process it starts belongs to the job.
func (p *conPTY) spawn(s spawnSpec) error {
	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return err
	}
	defer attrs.Delete()
	// This attribute takes the HPCON value itself, not a pointer to it.
	hpc := *(*unsafe.Pointer)(unsafe.Pointer(&p.console))
	if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, hpc, unsafe.Sizeof(p.console)); err != nil {
		return fmt.Errorf("pseudo console attribute: %w", err)
	}
	si := windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(si))
	si.Flags = windows.STARTF_USESTDHANDLES // no inherited std handles: the console provides them

	app, err := windows.UTF16PtrFromString(s.Path)
	if err != nil {
		return err
	}
	cmdline, err := windows.UTF16PtrFromString(windows.ComposeCommandLine(append([]string{s.Path}, s.Args...)))
	if err != nil {
		return err
	}
	var dir *uint16
	if s.Dir != "" {
		if dir, err = windows.UTF16PtrFromString(s.Dir); err != nil {
			return err
		}
	}
	env, err := envBlock(s.Env)
	if err != nil {
		return err
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("job object: %w", err)
	}
	p.job = job
	limit := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limit)), uint32(unsafe.Sizeof(limit))); err != nil {
		return fmt.Errorf("job limits: %w", err)
	}
	var pi windows.ProcessInformation
	flags := uint32(windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_UNICODE_ENVIRONMENT | windows.CREATE_SUSPENDED)
	if err := windows.CreateProcess(app, cmdline, nil, nil, false, flags, &env[0], dir, &si.StartupInfo, &pi); err != nil {
		return err
	}
	defer windows.CloseHandle(pi.Thread)
	p.process, p.pid = pi.Process, int(pi.ProcessId)
	if err := windows.AssignProcessToJobObject(job, pi.Process); err != nil {
		_ = windows.TerminateProcess(pi.Process, 1)
		return fmt.Errorf("job assignment: %w", err)
	}
	if _, err := windows.ResumeThread(pi.Thread); err != nil {
		_ = windows.TerminateProcess(pi.Process, 1)
		return fmt.Errorf("resume: %w", err)
	}
	return nil
}

// envBlock is a sorted, NUL-separated, double-NUL-terminated UTF-16
// environment block.
func envBlock(env []string) ([]uint16, error) {
	env = slices.Clone(env)
	slices.SortFunc(env, func(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) })
	var out []uint16
	for _, kv := range env {
		if strings.ContainsRune(kv, 0) {
			return nil, fmt.Errorf("%w: NUL in environment", ErrInvalid)
		}
		out = append(out, utf16.Encode([]rune(kv))...)
		out = append(out, 0)
	}
	return append(out, 0, 0), nil
}

func (p *conPTY) Read(b []byte) (int, error)  { return p.out.Read(b) }
func (p *conPTY) Write(b []byte) (int, error) { return p.in.Write(b) }
func (p *conPTY) Pid() int                    { return p.pid }
func (p *conPTY) Foreground() string          { return "" }

func (p *conPTY) Resize(cols, rows uint16) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrExited
	}
	return windows.ResizePseudoConsole(p.console, coord(cols, rows))
}

// Wait is called once; it releases the process handle.
func (p *conPTY) Wait() (int, error) {
	defer windows.CloseHandle(p.process)
	if _, err := windows.WaitForSingleObject(p.process, windows.INFINITE); err != nil {
		return -1, err
	}
	var code uint32
	if err := windows.GetExitCodeProcess(p.process, &code); err != nil {
		return -1, err
	}
	return int(int32(code)), nil
}

// Terminate closes the pseudo console: its clients get CTRL_CLOSE_EVENT,
// Windows' hangup, and the output pipe ends once they are gone.
func (p *conPTY) Terminate() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeConsoleLocked()
	return nil
}

func (p *conPTY) closeConsoleLocked() {
	if p.console != 0 {
		windows.ClosePseudoConsole(p.console)
		p.console = 0
	}
}

func (p *conPTY) KillAll() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.job == 0 {
		return nil
	}
	return windows.TerminateJobObject(p.job, 1)
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                       int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime   int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses uint32
	TotalTerminatedProcesses                             uint32
}

func (p *conPTY) Alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.job == 0 {
		return false
	}
	var acct jobAccounting
	if err := windows.QueryInformationJobObject(p.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil); err != nil {
		return false
	}
	return acct.ActiveProcesses > 0
}

// Close closes the console (which ends the output pipe and unblocks Read),
// the pipes, and the job, killing whatever is still in it.
func (p *conPTY) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.closeConsoleLocked()
	job := p.job
	p.job = 0
	p.mu.Unlock()
	_ = p.in.Close()
	err := p.out.Close()
	if job != 0 {
		_ = windows.CloseHandle(job)
	}
	return err
}

// defaultShell is %COMSPEC% (cmd.exe).
func defaultShell() string {
	if c := os.Getenv("COMSPEC"); c != "" {
		return c
	}
	return "cmd.exe"
}

func shellArgs(string) []string { return nil }
