package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"
	"github.com/spf13/cobra"

	"github.com/scv-agent/scv/internal/app"
	"github.com/scv-agent/scv/internal/clawbot"
	"github.com/scv-agent/scv/internal/client"
	"github.com/scv-agent/scv/internal/config"
	"github.com/scv-agent/scv/internal/delegation"
	"github.com/scv-agent/scv/internal/paths"
	"github.com/scv-agent/scv/internal/proto"
	"github.com/scv-agent/scv/internal/termtext"
)

func newClawbotCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clawbot",
		Short: "Talk to this daemon from WeChat: log a bot in, run, stop, show, log out",
		Args:  cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.refuseClawbot("scv clawbot " + cmd.Name())
		},
	}
	cmd.AddCommand(newClawbotLoginCmd(g), newClawbotRunCmd(g), newClawbotStopCmd(g), newClawbotStatusCmd(g), newClawbotLogoutCmd(g))
	return cmd
}

// refuseClawbot keeps delegated runs (SCV_PARENT set, or a delegation
// depth above 0) from managing the bridge: an agent must never hand
// itself a remote channel.
func (g *globals) refuseClawbot(what string) error {
	if g.env[delegation.EnvParent] != "" {
		return usageErr("%s is refused inside a delegated agent run (%s is set); ask the user to run it", what, delegation.EnvParent)
	}
	return g.refuseDelegated(what)
}

func accountFlag(cmd *cobra.Command, account *string) {
	cmd.Flags().StringVar(account, "account", clawbot.DefaultAccount, "bot account name (ASCII letters, digits, _ and -)")
}

func newClawbotLoginCmd(g *globals) *cobra.Command {
	var account, baseURL string
	cmd := &cobra.Command{
		Use:   "login [--account NAME] [--base-url URL]",
		Short: "Log a WeChat bot in by QR code and save its credentials",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := clawbot.CheckAccount(account); err != nil {
				return usageErr("--account: %v", err)
			}
			return g.clawbotLogin(account, baseURL)
		},
	}
	accountFlag(cmd, &account)
	cmd.Flags().StringVar(&baseURL, "base-url", "", "iLink origin to log in at (default: [clawbot] base_url of the user config)")
	return cmd
}

func (g *globals) clawbotLogin(account, baseURL string) error {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return err
	}
	if err := layout.Ensure(); err != nil {
		return err
	}
	if baseURL == "" {
		// The user config (and --config) only: a project config never
		// chooses where a bot logs in.
		loaded, err := config.Load(config.Options{Home: layout, ExtraFile: g.configPath, Env: g.env})
		if err != nil {
			return err
		}
		baseURL = loaded.Config.Clawbot.BaseURL
	}
	base, err := clawbot.CheckBaseURL(baseURL)
	if err != nil {
		return usageErr("%v", err)
	}
	files := clawbot.Files{Layout: layout}
	old, oldErr := files.Credentials(account)
	if oldErr != nil && !errors.Is(oldErr, fs.ErrNotExist) {
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("%v; fix or delete the file, or run `scv clawbot logout --account %s`", oldErr, account)}
	}
	bound, err := app.BridgeFingerprint(g.ctx, layout, account)
	if err != nil {
		return err
	}
	out := g.stdio.Out
	creds, err := clawbot.Login(g.ctx, clawbot.LoginOptions{
		BaseURL: base,
		ShowCode: func(content string) {
			fmt.Fprintf(out, "Scan this code with WeChat to log the bot in (account %q):\n\n", account)
			drawQR(out, content)
			// iLink chose the content: one line, made visible.
			fmt.Fprintf(out, "\nCode content: %s\nWaiting for the scan (up to %v)…\n", termtext.Line(content), clawbot.LoginTimeout)
		},
		Progress: func(state string) {
			switch state {
			case "scaned":
				fmt.Fprintln(out, "Scanned: confirm the login on the phone…")
			case "expired":
				fmt.Fprintln(out, "The code expired; here is a new one.")
			}
		},
	})
	if err != nil {
		return &exitError{code: ExitFailure, msg: err.Error()}
	}
	fp := creds.Fingerprint()
	other := func(what string) error {
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("this login is another identity (bot %s, owner %s at %s) than the %s of account %q; nothing was saved. "+
			"Run `scv clawbot logout --account %s` first, or log in under another --account", creds.BotID, creds.UserID, creds.BaseURL, what, account, account)}
	}
	if oldErr == nil && old.Fingerprint() != fp {
		return other("saved credentials")
	}
	if bound != "" && bound != fp {
		return other("delivery state")
	}
	if err := files.SaveCredentials(account, creds); err != nil {
		return err
	}
	verb := "logged in"
	if oldErr == nil {
		verb = "logged in again (new token, same identity: state kept)"
	}
	fmt.Fprintf(out, "Account %q %s: bot %s, owner %s, API %s.\nA running daemon starts the bridge within a few seconds; see `scv clawbot status`. Tools for the owner: `scv clawbot run --remote-tools owner`.\n",
		account, verb, creds.BotID, creds.UserID, creds.BaseURL)
	return nil
}

// drawQR draws a QR code with half-block characters (two modules a
// character row), dark on light, with its quiet zone.
func drawQR(w io.Writer, content string) {
	q, err := qrcode.New(content, qrcode.Low)
	if err != nil {
		fmt.Fprintf(w, "(cannot draw the code: %v; open the content below instead)\n", err)
		return
	}
	fmt.Fprint(w, q.ToSmallString(false))
}

func newClawbotRunCmd(g *globals) *cobra.Command {
	var account, workspace, remoteTools string
	cmd := &cobra.Command{
		Use:   "run [--account NAME] [--workspace P] [--remote-tools none|owner]",
		Short: "Enable the bridge of an account in the running daemon and save its settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := clawbot.CheckAccount(account); err != nil {
				return usageErr("--account: %v", err)
			}
			switch remoteTools {
			case "", clawbot.RemoteToolsNone, clawbot.RemoteToolsOwner:
			default:
				return usageErr("--remote-tools %q: want none or owner", remoteTools)
			}
			if workspace != "" {
				abs, err := filepath.Abs(workspace)
				if err != nil {
					return usageErr("--workspace: %v", err)
				}
				workspace = abs
			}
			on := true
			st, err := g.clawbotRequest(&proto.ClawbotSettings{
				Account: account, Enabled: &on, Workspace: workspace, RemoteTools: remoteTools}, "scv clawbot run")
			if err != nil {
				return err
			}
			a, ok := findAccount(st, account)
			if !ok {
				return &exitError{code: ExitFailure, msg: fmt.Sprintf("the daemon does not list account %q after saving its settings", account)}
			}
			fmt.Fprintf(g.stdio.Out, "clawbot %s: enabled, state %s\n", account, a.State)
			if remoteTools != "" {
				if a.RemoteTools == remoteTools {
					fmt.Fprintf(g.stdio.Out, "remote tools: %s (applied by the running bridge)\n", remoteTools)
				} else {
					why := a.LastError
					if remoteTools == clawbot.RemoteToolsOwner && a.OwnerUserID == "" {
						why = "the account's owner is unknown, so nobody gets tools; log in again"
					}
					fmt.Fprintf(g.stdio.Out, "remote tools: %s saved, NOT applied (the bridge applies %s): %s\n", remoteTools, a.RemoteTools, why)
				}
			}
			if a.State == clawbot.StateFailed {
				return &exitError{code: ExitFailure, msg: fmt.Sprintf("the bridge of %q failed: %s", account, a.LastError)}
			}
			return nil
		},
	}
	accountFlag(cmd, &account)
	cmd.Flags().StringVar(&workspace, "workspace", "", "directory of the account's sessions (default: the saved one, else the daemon's)")
	cmd.Flags().StringVar(&remoteTools, "remote-tools", "", "none: no sender gets tools; owner: the owner in a direct chat does (default: keep the saved value)")
	return cmd
}

func newClawbotStopCmd(g *globals) *cobra.Command {
	var account string
	cmd := &cobra.Command{
		Use:   "stop [--account NAME]",
		Short: "Disable the bridge of an account (kept disabled across restarts; credentials kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := clawbot.CheckAccount(account); err != nil {
				return usageErr("--account: %v", err)
			}
			off := false
			_, err := g.clawbotRequest(&proto.ClawbotSettings{Account: account, Enabled: &off}, "")
			var nd *client.NoDaemonError
			if errors.As(err, &nd) {
				// Nothing runs: saving the setting is all there is to do.
				layout, lerr := paths.Resolve(g.scvHome, g.env)
				if lerr != nil {
					return lerr
				}
				files := clawbot.Files{Layout: layout}
				set, serr := files.Settings(account)
				if serr != nil {
					return serr
				}
				set.Enabled = false
				if err := files.SaveSettings(account, set); err != nil {
					return err
				}
				err = nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "clawbot %s: disabled (credentials kept; `scv clawbot run` enables it again)\n", account)
			return nil
		},
	}
	accountFlag(cmd, &account)
	return cmd
}

func newClawbotLogoutCmd(g *globals) *cobra.Command {
	var account string
	cmd := &cobra.Command{
		Use:   "logout [--account NAME]",
		Short: "Stop the bridge of an account and delete its credentials, settings and delivery state (needs the daemon)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := clawbot.CheckAccount(account); err != nil {
				return usageErr("--account: %v", err)
			}
			if _, err := g.clawbotRequest(&proto.ClawbotLogout{Account: account}, "scv clawbot logout"); err != nil {
				return err
			}
			fmt.Fprintf(g.stdio.Out, "clawbot %s: logged out; credentials, settings and delivery state deleted\n", account)
			return nil
		},
	}
	accountFlag(cmd, &account)
	return cmd
}

func newClawbotStatusCmd(g *globals) *cobra.Command {
	var account string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "status [--account NAME] [--json]",
		Short: "Show the bridge's accounts as the running daemon sees them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if account != "" {
				if err := clawbot.CheckAccount(account); err != nil {
					return usageErr("--account: %v", err)
				}
			}
			layout, err := paths.Resolve(g.scvHome, g.env)
			if err != nil {
				return err
			}
			st, err := g.queryStatus(layout)
			if err != nil {
				return g.clawbotOffline(layout, account, jsonOut)
			}
			list := st.Clawbot
			if account != "" {
				list = nil
				if a, ok := findAccount(st, account); ok {
					list = append(list, a)
				}
			}
			if jsonOut {
				printJSON(g.stdio.Out, map[string]any{"daemon": map[string]any{"running": true, "pid": st.PID, "version": st.Version}, "accounts": orEmpty(list)})
				return nil
			}
			fmt.Fprintf(g.stdio.Out, "scv daemon: running (pid %d, version %s)\n", st.PID, st.Version)
			if len(list) == 0 {
				fmt.Fprintln(g.stdio.Out, "no clawbot accounts (log one in with `scv clawbot login`)")
				return nil
			}
			for _, a := range list {
				printAccount(g.stdio.Out, a)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "show this account only")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the status as JSON")
	return cmd
}

func orEmpty(l []proto.ClawbotAccount) []proto.ClawbotAccount {
	if l == nil {
		return []proto.ClawbotAccount{}
	}
	return l
}

func printAccount(w io.Writer, a proto.ClawbotAccount) {
	last := a.LastPoll
	if last == "" {
		last = "never"
	}
	errText := a.LastError
	if errText == "" {
		errText = "none"
	}
	fmt.Fprintf(w, "account %s:\n  bot id:       %s\n  owner:        %s\n  enabled:      %t\n  remote tools: %s\n  state:        %s\n  restarts:     %d\n  last error:   %s\n  last poll:    %s\n",
		termtext.Line(a.Account), termtext.Line(orDash(a.BotID)), termtext.Line(orDash(a.OwnerUserID)), a.Enabled,
		termtext.Line(a.RemoteTools), termtext.Line(a.State), a.Restarts, termtext.Line(errText), termtext.Line(last))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clawbotOffline shows the saved accounts when no daemon answers: saved
// credentials are not a connection, so the state is unknown.
func (g *globals) clawbotOffline(layout paths.Layout, account string, jsonOut bool) error {
	files := clawbot.Files{Layout: layout}
	names, err := files.Accounts()
	if err != nil {
		return err
	}
	var list []proto.ClawbotAccount
	for _, n := range names {
		if account != "" && n != account {
			continue
		}
		a := proto.ClawbotAccount{Account: n, State: "unknown", RemoteTools: "unknown"}
		if c, err := files.Credentials(n); err == nil {
			a.BotID, a.OwnerUserID = c.BotID, c.UserID
		} else if !errors.Is(err, fs.ErrNotExist) {
			a.LastError = err.Error()
		}
		if s, err := files.Settings(n); err == nil {
			a.Enabled, a.Workspace = s.Enabled, s.Workspace
			a.RemoteTools = "unknown (saved: " + s.RemoteTools + ")"
		} else {
			a.LastError = err.Error()
		}
		list = append(list, a)
	}
	if jsonOut {
		printJSON(g.stdio.Out, map[string]any{"daemon": map[string]any{"running": false, "socket": layout.Socket()}, "accounts": orEmpty(list)})
		return exitCode(ExitFailure)
	}
	fmt.Fprintf(g.stdio.Out, "scv daemon: not running (no answer on %s): connectivity unknown\n", layout.Socket())
	for _, a := range list {
		printAccount(g.stdio.Out, a)
	}
	return exitCode(ExitFailure)
}

func findAccount(st proto.DaemonStatus, account string) (proto.ClawbotAccount, bool) {
	for _, a := range st.Clawbot {
		if a.Account == account {
			return a, true
		}
	}
	return proto.ClawbotAccount{}, false
}

// clawbotRequest sends one administrative request to the running daemon
// and returns its status answer. what names the command for the error
// when no daemon runs ("" returns the *client.NoDaemonError itself).
func (g *globals) clawbotRequest(msg proto.Message, what string) (proto.DaemonStatus, error) {
	layout, err := paths.Resolve(g.scvHome, g.env)
	if err != nil {
		return proto.DaemonStatus{}, err
	}
	// A logout joins the bridge, whose turns get up to 10 s to cancel.
	ctx, cancel := context.WithTimeout(g.ctx, time.Minute)
	defer cancel()
	conn, err := g.dialDaemon(ctx, layout)
	var nd *client.NoDaemonError
	if errors.As(err, &nd) {
		if what == "" {
			return proto.DaemonStatus{}, err
		}
		return proto.DaemonStatus{}, &exitError{code: ExitFailure, msg: fmt.Sprintf("%s needs the running daemon (no answer on %s); start it with `scv start`", what, layout.Socket())}
	}
	if err != nil {
		return proto.DaemonStatus{}, &exitError{code: ExitFailure, msg: err.Error()}
	}
	defer conn.Close()
	st, err := daemonStatusCall(ctx, conn, msg)
	if err != nil {
		var re *client.RequestError
		if errors.As(err, &re) {
			return proto.DaemonStatus{}, &exitError{code: ExitFailure, msg: strings.TrimSpace(re.Message)}
		}
		return proto.DaemonStatus{}, &exitError{code: ExitFailure, msg: err.Error()}
	}
	return st, nil
}

func newReloadCmd(g *globals) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "reload",
		Short: "Make the running daemon reconcile its components (the WeChat bridge) now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.refuseClawbot("scv reload"); err != nil {
				return err
			}
			st, err := g.clawbotRequest(&proto.DaemonReload{}, "scv reload")
			if err != nil {
				return err
			}
			if jsonOut {
				printJSON(g.stdio.Out, st)
				return nil
			}
			fmt.Fprintf(g.stdio.Out, "scv daemon (pid %d) reconciled its components\n", st.PID)
			for _, a := range st.Clawbot {
				fmt.Fprintf(g.stdio.Out, "  clawbot %s: %s\n", termtext.Line(a.Account), termtext.Line(a.State))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the daemon's status as JSON")
	return cmd
}
