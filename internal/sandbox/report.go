package sandbox

import (
	"fmt"
	"strings"
)

// Report is what the running kernel can enforce.
type Report struct {
	// Available says commands can be sandboxed here at all (Linux with
	// Landlock); Reason says why not.
	Available bool
	Reason    string
	// ABI is the kernel's Landlock ABI version (0: none).
	ABI int
	// Errata is the kernel's Landlock errata bit set.
	Errata int
	// Seccomp says seccomp filters can be installed for this
	// architecture.
	Seccomp bool
}

// Rule is one rule of the sandbox and whether this kernel enforces it.
type Rule struct {
	Name     string `json:"name"`
	Enforced bool   `json:"enforced"`
	// How says by what it is enforced, or why it is not.
	How string `json:"how"`
	// NetworkOnly marks rules that only apply with network = false.
	NetworkOnly bool `json:"network_only,omitempty"`
	// Stricter marks a rule the kernel cannot grant in full and so
	// refuses more than asked: nothing is left open.
	Stricter bool `json:"stricter,omitempty"`
}

// minABIRefer is the first ABI that lets files move between allowed
// directories; minABITruncate the first that restricts truncate(2);
// minABINet TCP bind/connect; minABIScope abstract sockets and signals;
// minABIUnix connecting to pathname unix sockets.
const (
	minABIRefer    = 2
	minABITruncate = 3
	minABINet      = 4
	minABIScope    = 6
	minABIUnix     = 9
)

// signalErratum is the errata bit that fixes signal scoping (ABI 6).
const signalErratum = 0x2

func (r Report) signalScope() bool { return r.ABI >= minABIScope && r.Errata&signalErratum != 0 }

// Rules lists every rule of the sandbox with this kernel's enforcement.
func (r Report) Rules() []Rule {
	abi := fmt.Sprintf("Landlock ABI %d", r.ABI)
	rule := func(name string, ok bool, yes, no string) Rule {
		if ok {
			return Rule{Name: name, Enforced: true, How: yes}
		}
		return Rule{Name: name, How: no}
	}
	rules := []Rule{
		rule("filesystem: read and execute everywhere except deny_read", r.ABI >= 1, "Landlock (ABI 1)", "needs Landlock (Linux 5.13 or later, enabled in the kernel's lsm= list)"),
		rule("filesystem: write only in the workspace, writable_roots, the command's temp dir and /dev/null-style devices", r.ABI >= 1, "Landlock (ABI 1)", "needs Landlock"),
		rule("filesystem: truncate(2) only in the writable places", r.ABI >= minABITruncate, "Landlock (ABI 3)", abi+": truncate(2) of any readable file is not restricted (needs ABI 3, Linux 6.2)"),
	}
	refer := rule("filesystem: move and link files between writable directories", r.ABI >= minABIRefer, "Landlock (ABI 2)", abi+": every rename or link across directories is refused, even inside the workspace (needs ABI 2, Linux 5.19)")
	refer.Stricter = !refer.Enforced
	rules = append(rules, refer)
	tcp := rule("network: no TCP connect or bind", r.ABI >= minABINet, "Landlock (ABI 4)", "")
	if !tcp.Enforced && r.Seccomp {
		tcp = Rule{Name: tcp.Name, Enforced: true, How: "seccomp: no IPv4/IPv6 sockets at all (" + abi + " cannot restrict TCP)"}
	} else if !tcp.Enforced {
		tcp.How = "needs Landlock ABI 4 (Linux 6.7) or seccomp"
	}
	tcp.NetworkOnly = true
	udp := rule("network: no UDP, raw, netlink or other socket families; no TCP Fast Open or MPTCP", r.Seccomp, "seccomp", "needs seccomp for this architecture")
	udp.NetworkOnly = true
	rules = append(rules, tcp, udp)
	unix := rule("IPC: no connecting to unix sockets outside the sandbox (the SCV daemon, agents, session buses)", r.ABI >= minABIUnix, "Landlock (ABI 9)", "")
	if !unix.Enforced && r.Seccomp {
		unix = Rule{Name: unix.Name, Enforced: true, How: "seccomp: no unix sockets at all, socketpair(2) only (" + abi + " cannot tell inside from outside)"}
	} else if !unix.Enforced {
		unix.How = "needs Landlock ABI 9 or seccomp"
	}
	sig := rule("IPC: signals only to processes of the same sandbox", r.signalScope(), "Landlock (ABI 6)", abi+": signals to the user's other processes are not restricted (needs ABI 6, Linux 6.12, with the signal-scoping fix)")
	abs := rule("IPC: abstract unix sockets only within the sandbox", r.ABI >= minABIScope || r.Seccomp, "Landlock (ABI 6)", abi+": abstract unix sockets are not scoped (needs ABI 6, Linux 6.12)")
	if r.ABI < minABIScope && r.Seccomp {
		abs.How = "seccomp: no unix sockets at all"
	}
	rules = append(rules, unix, abs, sig)
	return rules
}

// Missing lists, one phrase each, the rules a command with this network
// setting would run without.
func (r Report) Missing(network bool) []string {
	var out []string
	for _, rule := range r.Rules() {
		if rule.Enforced || rule.Stricter || network && rule.NetworkOnly {
			continue
		}
		out = append(out, rule.Name+" ("+rule.How+")")
	}
	return out
}

// Text is the report as `scv sandbox check` and `scv status` print it.
func (r Report) Text(network bool) string {
	var b strings.Builder
	if !r.Available {
		fmt.Fprintf(&b, "sandbox: unavailable (%s)\n", r.Reason)
		return b.String()
	}
	fmt.Fprintf(&b, "sandbox: available, Landlock ABI %d, seccomp %s\n", r.ABI, map[bool]string{true: "yes", false: "no"}[r.Seccomp])
	for _, rule := range r.Rules() {
		mark := "enforced"
		if !rule.Enforced {
			mark = "NOT enforced"
			if rule.Stricter {
				mark = "refused"
			}
		}
		if network && rule.NetworkOnly {
			mark = "off (network = true)"
		}
		fmt.Fprintf(&b, "  %-12s %s: %s\n", mark, rule.Name, rule.How)
	}
	return b.String()
}
