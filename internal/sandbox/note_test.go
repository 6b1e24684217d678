package sandbox

import "testing"

func TestExplain(t *testing.T) {
	c := Config{Mode: ModeWorkspaceWrite, WritableRoots: []string{"/opt/cache"}, DenyRead: []string{"/home/u/.ssh", "/home/u/.scv"}}
	ro := c
	ro.Mode = ModeReadOnly
	net := c
	net.Network = true
	cases := []struct {
		name   string
		c      Config
		output string
		want   string
	}{
		{"bash redirect", c, "/bin/bash: line 1: /etc/hosts: Permission denied\n", "blocked by the sandbox: write outside the workspace (/etc/hosts)"},
		{"cp", c, "cp: cannot create regular file '/usr/local/x': Permission denied\n", "blocked by the sandbox: write outside the workspace (/usr/local/x)"},
		{"relative in the workspace's parent", c, "touch: cannot touch '../x': Permission denied\n", "blocked by the sandbox: write outside the workspace (/x)"},
		{"hidden file", c, "cat: /home/u/.ssh/id_ed25519: Permission denied\n", "blocked by the sandbox: read of /home/u/.ssh/id_ed25519, hidden by sandbox.deny_read"},
		{"python hidden", c, "PermissionError: [Errno 13] Permission denied: '/home/u/.scv/scv.db'\n", "blocked by the sandbox: read of /home/u/.scv/scv.db, hidden by sandbox.deny_read"},
		{"listing home", c, "ls: cannot open directory '/home/u': Permission denied\n", "blocked by the sandbox: listing /home/u, which holds paths hidden by sandbox.deny_read (name the file or directory you need instead)"},
		{"read-only", ro, "/bin/bash: line 1: out.txt: Permission denied\nsh: 1: cannot create /w/a: Permission denied\n", "blocked by the sandbox: write in read-only mode (/w/out.txt); write in read-only mode (/w/a)"},
		{"curl", c, "curl: (7) Failed to connect to 127.0.0.1 port 8 after 0 ms: Couldn't connect to server\n", "blocked by the sandbox: network access (sandbox.network = false)"},
		{"dev tcp", c, "bash: connect: Permission denied\nbash: /dev/tcp/127.0.0.1/80: Permission denied\n", "blocked by the sandbox: network access (sandbox.network = false)"},
		{"udp", c, "PermissionError: [Errno 1] Operation not permitted\n", "blocked by the sandbox: an operation the sandbox does not allow"},
		{"kill", c, "bash: line 1: kill: (123) - Operation not permitted\n", "blocked by the sandbox: signal to a process outside the sandbox"},
		{"network allowed: curl is the network's fault", net, "curl: (7) Failed to connect to 127.0.0.1 port 8 after 0 ms: Couldn't connect to server\n", ""},
		{"an ordinary failure", c, "make: *** [all] Error 2\n", ""},
		{"a write in a writable root is not the sandbox", c, "cp: cannot create regular file '/opt/cache/x': Permission denied\n", ""},
		{"off", Config{Mode: ModeOff}, "/bin/bash: line 1: /etc/hosts: Permission denied\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Explain(tc.c, "/w", tc.output); got != tc.want {
				t.Errorf("Explain = %q\nwant      %q", got, tc.want)
			}
		})
	}
}
