package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter covers what Landlock does not: socket families other
// than TCP (UDP, raw, netlink, packet, …), TCP Fast Open (a connect hidden
// in sendto/sendmsg) and MPTCP, unix sockets while Landlock cannot tell
// a server inside the sandbox from one outside, and io_uring (whose socket
// operations seccomp cannot see). A refused call fails with EPERM. Calls
// of another architecture (32-bit x86 on amd64, x32) are refused as a
// whole, since their numbers differ.
//
// seccomp_data: nr (4 bytes), arch (4), instruction pointer (8), then six
// 8-byte arguments; the low half of an argument is at 16 + 8*i on the
// little-endian architectures filtered here.
const (
	offNr        = 0
	offArch      = 4
	retAllow     = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno     = 0x00050000 // SECCOMP_RET_ERRNO | errno
	msgFastOpen  = 0x20000000
	sockTypeMask = 0xf
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) }

// filterSpec is what the filter allows.
type filterSpec struct {
	// network: every socket family and flag (still no unix sockets
	// unless unixSockets).
	network bool
	// tcp: with network off, IPv4/IPv6 stream sockets may be created
	// (Landlock refuses their connect and bind).
	tcp bool
	// unixSockets: socket(AF_UNIX) is allowed (Landlock scopes it).
	unixSockets bool
}

// insn is one BPF instruction whose jumps name labels.
type insn struct {
	code          uint16
	k             uint32
	label, jt, jf string
}

func ld(off uint32) insn { return insn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off} }
func jeq(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jge(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jset(k uint32, jt, jf string) insn {
	return insn{code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func and(k uint32) insn        { return insn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: k} }
func ret(k uint32) insn        { return insn{code: unix.BPF_RET | unix.BPF_K, k: k} }
func at(l string, i insn) insn { i.label = l; return i }

// program is the filter for s on this architecture.
func program(s filterSpec) ([]unix.SockFilter, error) {
	if seccompArch == 0 {
		return nil, fmt.Errorf("no seccomp filter for this architecture")
	}
	deny := uint32(retErrno | uint32(unix.EPERM))
	p := []insn{
		ld(offArch),
		jeq(seccompArch, "", "deny"),
		ld(offNr),
	}
	if x32Bit != 0 {
		p = append(p, jge(x32Bit, "deny", ""))
	}
	p = append(p,
		jeq(unix.SYS_IO_URING_SETUP, "deny", ""),
		jeq(unix.SYS_SOCKET, "socket", ""),
	)
	if !s.network {
		p = append(p,
			jeq(unix.SYS_SENDTO, "flags3", ""),
			jeq(unix.SYS_SENDMMSG, "flags3", ""),
			jeq(unix.SYS_SENDMSG, "flags2", ""),
		)
	}
	p = append(p, ret(retAllow),
		at("socket", ld(offArg(0))),
		jeq(unix.AF_UNIX, "unix", ""),
	)
	switch {
	case s.network:
		p = append(p, ret(retAllow))
	case s.tcp:
		p = append(p,
			jeq(unix.AF_INET, "tcp", ""),
			jeq(unix.AF_INET6, "tcp", "deny"),
			at("tcp", ld(offArg(1))),
			and(sockTypeMask),
			jeq(unix.SOCK_STREAM, "", "deny"),
			ld(offArg(2)),
			jeq(0, "allow", ""),
			jeq(unix.IPPROTO_TCP, "allow", "deny"),
		)
	default:
		p = append(p, ret(deny))
	}
	unixRet := deny
	if s.unixSockets {
		unixRet = retAllow
	}
	p = append(p, at("unix", ret(unixRet)))
	if !s.network {
		p = append(p,
			at("flags2", ld(offArg(2))),
			jset(msgFastOpen, "deny", "allow"),
			at("flags3", ld(offArg(3))),
			jset(msgFastOpen, "deny", "allow"),
		)
	}
	p = append(p, at("allow", ret(retAllow)), at("deny", ret(deny)))
	return assemble(p)
}

// assemble resolves the labels into relative jump offsets ("" means the
// next instruction).
func assemble(p []insn) ([]unix.SockFilter, error) {
	pos := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			pos[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		f := unix.SockFilter{Code: in.code, K: in.k}
		for _, j := range []struct {
			label string
			dst   *uint8
		}{{in.jt, &f.Jt}, {in.jf, &f.Jf}} {
			if j.label == "" {
				continue
			}
			t, ok := pos[j.label]
			if !ok || t <= i || t-i-1 > 255 {
				return nil, fmt.Errorf("seccomp program: bad jump to %q at %d", j.label, i)
			}
			*j.dst = uint8(t - i - 1)
		}
		out[i] = f
	}
	return out, nil
}

// installFilter loads the filter for the calling thread (no_new_privs must
// already be set).
func installFilter(f []unix.SockFilter) error {
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return fmt.Errorf("install seccomp filter: %w", e)
	}
	return nil
}
