//go:build !unix

package model

func cpuNanos() int64 { return 0 }
