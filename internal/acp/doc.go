// Package acp is the agent side of the Agent Client Protocol (ACP v1,
// JSON-RPC 2.0 with one JSON object per line on stdio) that `scv acp`
// speaks to editors. It is one more client of SCV's own protocol, not a
// second agent loop: every ACP session is a session of an internal/server
// reached through an internal/client connection (a server served in the
// same process, or the daemon's socket), and every ACP method, update and
// permission request is a translation of that protocol's messages and
// events. The JSON-RPC layer is its own (docs/acp.md says why): a line
// that is not JSON is answered with a parse error and the connection goes
// on.
package acp
