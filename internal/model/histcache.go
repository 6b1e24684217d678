package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
)

// HistoryCache keeps the wire encoding of one session's history messages
// between its requests, so a step re-encodes only the messages that are new
// since the last request instead of the whole history. A message is looked
// up by what it holds (compared with the last request's message at the same
// position, else found by a hash of its fields and confirmed by comparing
// them), never by position alone, so compaction, rewind, fork and edited
// notes can never reuse a stale encoding: a message that differs in any
// encoded field is a miss. Entries the last request did not use are dropped, so
// the cache holds at most one request's history. All three wires use it;
// a request with images is encoded the old way every time
// (their bytes are spliced in by imageSlots). Safe for concurrent use; a
// nil *HistoryCache encodes everything every time.
type HistoryCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	wire string
	prev []cachedMsg // the last request's messages, in order
}

type cachedMsg struct {
	m   Message
	enc []byte // the message's array elements, comma-separated ("" for none)
}

// NewHistoryCache returns an empty cache for one session.
func NewHistoryCache() *HistoryCache { return &HistoryCache{seed: maphash.MakeSeed()} }

// items is the JSON array of msgs' encodings on wire (after prefix, one
// element already encoded), each message's elements from the cache or
// from enc. A message is first compared with the last request's message
// at the same position (the common case: the history only grew); on a
// miss the last request's messages are indexed by key once.
func (h *HistoryCache) items(wire string, prefix []byte, msgs []Message, enc func(Message) ([]byte, error)) ([]byte, error) {
	encs, err := h.encoded(wire, msgs, enc)
	if err != nil {
		return nil, err
	}
	size := len(prefix) + 2
	for _, b := range encs {
		size += len(b) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	out = append(out, prefix...)
	for _, b := range encs {
		if len(b) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return append(out, ']'), nil
}

// encoded is each message's elements on wire, from the cache or from enc.
func (h *HistoryCache) encoded(wire string, msgs []Message, enc func(Message) ([]byte, error)) ([][]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.wire != wire {
		h.wire, h.prev = wire, nil
	}
	next := make([]cachedMsg, len(msgs))
	encs := make([][]byte, len(msgs))
	var index map[uint64][]cachedMsg
	for i, m := range msgs {
		var b []byte
		ok := false
		if i < len(h.prev) && sameMessage(h.prev[i].m, m) {
			b, ok = h.prev[i].enc, true
		} else if i < len(h.prev) {
			if index == nil {
				index = make(map[uint64][]cachedMsg, len(h.prev))
				for _, c := range h.prev {
					k := h.key(c.m)
					index[k] = append(index[k], c)
				}
			}
			b, ok = lookup(index[h.key(m)], m)
		}
		if !ok {
			var err error
			if b, err = enc(m); err != nil {
				return nil, err
			}
		}
		next[i] = cachedMsg{m: m, enc: b}
		encs[i] = b
	}
	h.prev = next
	return encs, nil
}

func lookup(cs []cachedMsg, m Message) ([]byte, bool) {
	for _, c := range cs {
		if sameMessage(c.m, m) {
			return c.enc, true
		}
	}
	return nil, false
}

// key hashes the fields the OpenAI wires encode, with at most 64 bytes of
// each end of the content (sameMessage compares the rest).
func (h *HistoryCache) key(m Message) uint64 {
	var d maphash.Hash
	d.SetSeed(h.seed)
	d.WriteString(string(m.Role))
	d.WriteByte(0)
	d.WriteString(m.ToolCallID)
	d.WriteByte(0)
	if c := m.Content; len(c) > 128 {
		d.WriteString(c[:64])
		d.WriteString(c[len(c)-64:])
	} else {
		d.WriteString(c)
	}
	n := len(m.Content)
	d.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
	for _, tc := range m.ToolCalls {
		d.WriteString(tc.ID)
		d.WriteByte(0)
	}
	return d.Sum64()
}

// sameMessage reports whether a and b encode alike on every wire (images
// aside: messages with images are never cached).
func sameMessage(a, b Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.Thinking, b.Thinking)
}

// cacheable reports whether every message of msgs can come from the cache:
// images are placed by imageSlots per request.
func cacheable(h *HistoryCache, msgs []Message) bool {
	if h == nil {
		return false
	}
	for _, m := range msgs {
		if len(m.Images) > 0 {
			return false
		}
	}
	return true
}

// marshalJoined is objs' JSON encodings joined by commas.
func marshalJoined(objs ...jsonObject) ([]byte, error) {
	var b []byte
	for i, o := range objs {
		j, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j...)
	}
	return b, nil
}

// spliceList marshals body, whose key holds a placeholder string, and puts
// list (already JSON) where the placeholder's quoted string is.
func spliceList(body jsonObject, key string, list []byte) ([]byte, error) {
	mark := "scv-history-" + newImageSlots().nonce
	body[key] = mark
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	q := []byte(`"` + mark + `"`)
	i := bytes.Index(b, q)
	if i < 0 {
		return nil, errHistoryPlaceholder
	}
	out := make([]byte, 0, len(b)-len(q)+len(list))
	out = append(out, b[:i]...)
	out = append(out, list...)
	return append(out, b[i+len(q):]...), nil
}

var errHistoryPlaceholder = errors.New("encode request: the history placeholder is missing")
