package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// envTagged lists the live processes (other than this one) whose
// environment holds an entry key=value with match(value), with their start
// times. The environment is read first (kernel threads have none, so most
// of /proc is skipped cheaply), then the start time, then the environment
// again, so a PID reused in between never matches.
//
// A process in the middle of execve briefly shows an empty environment, and
// a setsid escapee that execs right as its shell exits is common; empty
// environments are therefore read again a few times, a millisecond apart.
func envTagged(key string, match func(value string) bool) []Ident {
	names, err := readProcNames()
	if err != nil {
		return nil
	}
	sc := tagScan{prefix: []byte(key + "="), match: match, buf: make([]byte, 0, 16*1024)}
	self := os.Getpid()
	var empty []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		switch sc.check(pid) {
		case envEmpty:
			empty = append(empty, pid)
		case envMatch:
			sc.add(pid)
		}
	}
	for retry := 0; retry < 5 && len(empty) > 0; retry++ {
		time.Sleep(time.Millisecond)
		still := empty[:0]
		for _, pid := range empty {
			switch sc.check(pid) {
			case envEmpty:
				still = append(still, pid)
			case envMatch:
				sc.add(pid)
			}
		}
		empty = still
	}
	return sc.found
}

type envState int

const (
	envOther envState = iota
	envEmpty
	envMatch
)

// tagScan reads environments with one reused buffer.
type tagScan struct {
	prefix []byte
	match  func(string) bool
	buf    []byte
	found  []Ident
}

func (sc *tagScan) check(pid int) envState {
	var err error
	sc.buf, err = readInto(sc.buf, "/proc/"+strconv.Itoa(pid)+"/environ")
	switch {
	case err != nil:
		return envOther
	case len(sc.buf) == 0:
		return envEmpty
	}
	for kv := range bytes.SplitSeq(sc.buf, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, sc.prefix); ok && sc.match(string(v)) {
			return envMatch
		}
	}
	return envOther
}

// add records pid with its start time if it is still the tagged process.
func (sc *tagScan) add(pid int) {
	st, err := readStat(pid)
	if err == nil && !st.dead() && sc.check(pid) == envMatch {
		sc.found = append(sc.found, Ident{PID: pid, Start: st.start})
	}
}

// readInto reads the whole file into buf[:0], reusing its storage. Plain system calls: this runs for every process on
// every call, and os.File's poller registration would double its cost.
func readInto(buf []byte, path string) ([]byte, error) {
	buf = buf[:0]
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return buf[:0], &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
