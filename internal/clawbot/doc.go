// Package clawbot is SCV's WeChat bridge: it lets a person talk to their
// own daemon from WeChat through Tencent's iLink bot API. It owns the
// iLink client (QR login, long-polled getupdates, sendmessage with retry
// and finality), the bridge of one bot account (durable claims, cursor and
// dedupe window in the store, pending replies with per-chunk client ids,
// one session per direct-chat sender and per group and sender, remote tool
// authority) and the supervisor that runs one bridge per enabled account
// inside the daemon. The bridge is a protocol client of the daemon's own
// server: it starts sessions and turns and answers approvals like any
// client, and never runs a tool itself. Nothing raw leaves through WeChat:
// replies are the model's final answer, sanitized and split, or a short
// fixed text.
package clawbot
