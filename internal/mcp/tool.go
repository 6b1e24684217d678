package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scv-agent/scv/internal/tool"
)

// remote is one tool of one server, as a session offers it.
type remote struct {
	in          *instance
	server      string
	name        string // the server's own name
	risk        tool.Risk
	annotations *sdk.ToolAnnotations
	timeout     time.Duration
}

// newTool builds the tool.Tool of t, or says why the tool is not offered.
func newTool(in *instance, srv Server, t *sdk.Tool) (tool.Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be encoded: %v", err)
	}
	if len(schema) > maxSchemaBytes {
		return nil, fmt.Errorf("its input schema has %d bytes, more than %d", len(schema), maxSchemaBytes)
	}
	r := &remote{in: in, server: srv.Name, name: t.Name, risk: srv.Risk, annotations: t.Annotations, timeout: srv.ToolTimeout}
	if r.risk == "" {
		r.risk = tool.Process
	}
	if slices.Contains(srv.ReadOnlyTools, t.Name) {
		r.risk = tool.ReadOnly
	}
	if r.timeout <= 0 {
		r.timeout = DefaultToolTimeout
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" && t.Annotations != nil {
		desc = strings.TrimSpace(t.Annotations.Title)
	}
	if len(desc) > maxDescriptionBytes {
		desc = tool.TruncateUTF8(desc, maxDescriptionBytes) + "…"
	}
	desc = fmt.Sprintf("%s\n(tool %q of the MCP server %q)", desc, t.Name, srv.Name)
	tl, err := tool.FromSchema(ToolName(srv.Name, t.Name), strings.TrimSpace(desc), schema, r.plan)
	if err != nil {
		return nil, fmt.Errorf("its input schema is unusable: %v", strings.TrimPrefix(err.Error(), "schema of "+ToolName(srv.Name, t.Name)+": "))
	}
	return tool.WithRiskClass(tl, string(r.risk)), nil
}

func (r *remote) plan(env tool.Env, args json.RawMessage) (tool.Plan, error) {
	return tool.Plan{Risk: r.risk, Summary: r.summary(args), Run: func(ctx context.Context) tool.Result {
		return r.run(ctx, env, args)
	}}, nil
}

// summary is what an approver sees: server, tool, the full arguments
// (bounded) and the server's own hints, which are only information.
func (r *remote) summary(args json.RawMessage) string {
	a := string(args)
	if len(a) > maxSummaryArgs {
		a = tool.TruncateUTF8(a, maxSummaryArgs) + fmt.Sprintf("… (%d bytes in all)", len(args))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s, tool %s\narguments: %s", r.server, r.name, a)
	if h := hints(r.annotations); h != "" {
		fmt.Fprintf(&b, "\nthe server describes this tool as: %s (not verified)", h)
	}
	return b.String()
}

// hints renders a tool's annotations.
func hints(a *sdk.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	var h []string
	if a.Title != "" {
		h = append(h, fmt.Sprintf("%q", a.Title))
	}
	if a.ReadOnlyHint {
		h = append(h, "read-only")
	}
	if a.DestructiveHint != nil {
		if *a.DestructiveHint {
			h = append(h, "destructive")
		} else {
			h = append(h, "not destructive")
		}
	}
	if a.IdempotentHint {
		h = append(h, "idempotent")
	}
	if a.OpenWorldHint != nil {
		if *a.OpenWorldHint {
			h = append(h, "reaches outside systems")
		} else {
			h = append(h, "closed world")
		}
	}
	return strings.Join(h, ", ")
}

// run calls the tool: the server is started (or waited for, after a
// failure) as needed; the call is bounded by the tool timeout, and a
// cancelled or timed-out call sends the server notifications/cancelled and
// returns at once.
func (r *remote) run(ctx context.Context, env tool.Env, args json.RawMessage) tool.Result {
	limit := env.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	c, err := r.in.ensure(ctx, true)
	if err != nil {
		return r.failure(ctx, nil, err, false)
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	params := &sdk.CallToolParams{Name: r.name, Arguments: args}
	token := rand.Text()
	params.SetProgressToken(token)
	defer c.watchProgress(token, env.Progress)()
	res, err := c.sess.CallTool(cctx, params)
	if err != nil {
		return r.failure(ctx, c, err, errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil)
	}
	return render(res, limit)
}

// failure turns a call that got no result into what the model should see.
func (r *remote) failure(ctx context.Context, c *conn, err error, timedOut bool) tool.Result {
	var ue *unavailableError
	var je *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		if c == nil {
			return tool.Fail(tool.Cancelled, "cancelled before the MCP server %s was ready", r.server)
		}
		return tool.Fail(tool.Cancelled, "cancelled; the MCP server %s was told to stop the call", r.server)
	case timedOut:
		return tool.Fail(tool.Limit, "the MCP server %s did not answer within %d s (mcp.servers.%s.tool_timeout_seconds); it was told to stop the call",
			r.server, int(r.timeout.Seconds()), r.server)
	case errors.As(err, &ue):
		return tool.Fail(tool.Unavailable, "%v", ue)
	case errors.Is(err, errStopped):
		return tool.Fail(tool.Unavailable, "the MCP server %s was stopped because SCV is shutting down", r.server)
	case c == nil:
		return tool.Fail(tool.Unavailable, "the MCP server %s could not be started: %v", r.server, err)
	case errors.As(err, &je):
		return tool.Fail(tool.Failed, "the MCP server %s refused the call: %s (code %d)", r.server, je.Message, je.Code)
	}
	if c.endedSoon() {
		msg := fmt.Sprintf("the MCP server %s ended during the call: %v; it is started again on the next call", r.server, c.endError())
		if t := c.tail(); t != "" {
			msg += "; its stderr ends with: " + t
		}
		return tool.Fail(tool.Failed, "%s", msg)
	}
	return tool.Fail(tool.Failed, "the call to the MCP server %s failed: %v", r.server, err)
}

// endedSoon says the connection ended, waiting briefly: a call fails as the
// server dies, a moment before the process is seen gone.
func (c *conn) endedSoon() bool {
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		if c.ended() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
