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
// times. Kernel threads are skipped by their flags (they have no
// environment); for the others the start time is read first, then the
// environment, then the start time again for a match, so a PID reused in
// between never matches.
//
// A process in the middle of execve briefly shows an empty environment, and
// a setsid escapee that execs right as its shell exits is common; empty
// environments of user processes are therefore read again a few times, a
// millisecond apart.
func envTagged(key string, match func(value string) bool) []Ident {
	names, err := readProcNames()
	if err != nil {
		return nil
	}
	sc := tagScan{prefix: []byte(key + "="), match: match, buf: make([]byte, 0, 16*1024)}
	self := os.Getpid()
	var empty []Ident
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.kthread() || st.dead() {
			continue
		}
		switch sc.check(pid) {
		case envEmpty:
			empty = append(empty, Ident{PID: pid, Start: st.start})
		case envMatch:
			sc.add(pid, st.start)
		}
	}
	for retry := 0; retry < 5 && len(empty) > 0; retry++ {
		time.Sleep(time.Millisecond)
		still := empty[:0]
		for _, id := range empty {
			switch sc.check(id.PID) {
			case envEmpty:
				still = append(still, id)
			case envMatch:
				sc.add(id.PID, id.Start)
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

// add records pid if it is still the process whose start time was read
// before its environment.
func (sc *tagScan) add(pid int, start uint64) {
	if Alive(pid, start) {
		sc.found = append(sc.found, Ident{PID: pid, Start: start})
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
