package sandbox

import (
	"golang.org/x/sys/unix"
)

// probes are single system calls run inside the sandbox by the syscall
// tests; each returns the call's error.
var probes = map[string]func() error{
	"socket-unix-stream": func() error { return sock(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	"socket-unix-dgram":  func() error { return sock(unix.AF_UNIX, unix.SOCK_DGRAM, 0) },
	"socketpair-unix": func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	},
	"socket-inet-stream": func() error { return sock(unix.AF_INET, unix.SOCK_STREAM, 0) },
	"socket-inet-stream-cloexec": func() error {
		return sock(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	},
	"socket-inet-tcp":        func() error { return sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP) },
	"socket-inet6-stream":    func() error { return sock(unix.AF_INET6, unix.SOCK_STREAM, 0) },
	"socket-inet-mptcp":      func() error { return sock(unix.AF_INET, unix.SOCK_STREAM, 262) },
	"socket-inet-dgram":      func() error { return sock(unix.AF_INET, unix.SOCK_DGRAM, 0) },
	"socket-inet6-dgram":     func() error { return sock(unix.AF_INET6, unix.SOCK_DGRAM, 0) },
	"socket-inet-raw":        func() error { return sock(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP) },
	"socket-inet-icmp-dgram": func() error { return sock(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP) },
	"socket-netlink":         func() error { return sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE) },
	"socket-packet":          func() error { return sock(unix.AF_PACKET, unix.SOCK_DGRAM, 0) },
	"socket-vsock":           func() error { return sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"sendto-fastopen": func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}})
	},
	"sendmsg-fastopen": func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Sendmsg(fd, []byte("x"), nil, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}}, unix.MSG_FASTOPEN)
	},
	"sendto-plain-pair": func() error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		return unix.Sendto(fds[0], []byte("x"), 0, nil)
	},
	"io_uring_setup": func() error {
		params := make([]byte, 120)
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafePointer(params)), 0)
		if e != 0 {
			return e
		}
		unix.Close(int(fd))
		return nil
	},
	"getpid": func() error { unix.Getpid(); return nil },
}

func sock(domain, typ, proto int) error {
	fd, err := unix.Socket(domain, typ, proto)
	if err == nil {
		unix.Close(fd)
	}
	return err
}
