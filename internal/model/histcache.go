package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
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
// (their bytes are spliced in by imageSlots).
//
// The encodings live in one append-only buffer, the history's JSON array
// without its closing bracket: a request that only appended to the last
// one's messages (the common case: the history only grew) encodes and
// appends the new messages and sends the buffer as it is, so the cost of
// a step does not grow with the session. Any other change builds a new
// buffer (from the cached encodings); bytes below a buffer's length are
// never written again, so a body still being sent is never changed. Safe
// for concurrent use; a nil *HistoryCache encodes everything every time.
type HistoryCache struct {
	mu     sync.Mutex
	seed   maphash.Seed
	wire   string
	prefix []byte      // the element before the messages' (chat: the system message)
	buf    []byte      // '[' prefix, then prev's elements, comma-separated
	prev   []cachedMsg // the last request's messages, in order
}

type cachedMsg struct {
	m        Message
	off, end int // the message's array elements in buf ("" for none)
}

// NewHistoryCache returns an empty cache for one session.
func NewHistoryCache() *HistoryCache { return &HistoryCache{seed: maphash.MakeSeed()} }

// items is the JSON array of msgs' encodings on wire (after prefix, one
// element already encoded), as the parts a body is sent from: the cache's
// buffer and the closing bracket.
func (h *HistoryCache) items(wire string, prefix []byte, msgs []Message, enc func(Message) ([]byte, error)) ([][]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.update(wire, prefix, msgs, enc); err != nil {
		return nil, err
	}
	return [][]byte{h.buf[:len(h.buf):len(h.buf)], []byte("]")}, nil
}

// encoded is each message's elements on wire, from the cache or from enc.
func (h *HistoryCache) encoded(wire string, msgs []Message, enc func(Message) ([]byte, error)) ([][]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.update(wire, nil, msgs, enc); err != nil {
		return nil, err
	}
	encs := make([][]byte, len(h.prev))
	for i, c := range h.prev {
		encs[i] = h.buf[c.off:c.end:c.end]
	}
	return encs, nil
}

// update makes prev and buf hold msgs on wire after prefix: appended to
// when msgs begin with prev, else rebuilt.
func (h *HistoryCache) update(wire string, prefix []byte, msgs []Message, enc func(Message) ([]byte, error)) error {
	if h.wire != wire {
		h.wire, h.prev, h.buf = wire, nil, nil
	}
	k := 0
	for k < len(h.prev) && k < len(msgs) && sameMessage(&h.prev[k].m, &msgs[k]) {
		k++
	}
	if h.buf == nil || k < len(h.prev) || !bytes.Equal(prefix, h.prefix) {
		return h.rebuild(prefix, msgs, enc)
	}
	for _, m := range msgs[k:] {
		b, err := enc(m)
		if err != nil {
			return err
		}
		h.add(m, b)
	}
	return nil
}

// rebuild fills a new buffer with msgs, each from the last request's
// messages when one holds the same (same position first, else by key).
func (h *HistoryCache) rebuild(prefix []byte, msgs []Message, enc func(Message) ([]byte, error)) error {
	old, oldBuf := h.prev, h.buf
	size := len(prefix) + 1 + len(oldBuf)
	h.prefix = slices.Clone(prefix)
	h.buf = append(append(make([]byte, 0, size+size/8+64), '['), prefix...)
	h.prev = make([]cachedMsg, 0, len(msgs))
	var index map[uint64][]cachedMsg
	for i := range msgs {
		m := &msgs[i]
		var b []byte
		ok := false
		if i < len(old) && sameMessage(&old[i].m, m) {
			b, ok = oldBuf[old[i].off:old[i].end], true
		} else if len(old) > 0 {
			if index == nil {
				index = make(map[uint64][]cachedMsg, len(old))
				for _, c := range old {
					k := h.key(&c.m)
					index[k] = append(index[k], c)
				}
			}
			if c, found := lookup(index[h.key(m)], m); found {
				b, ok = oldBuf[c.off:c.end], true
			}
		}
		if !ok {
			var err error
			if b, err = enc(*m); err != nil {
				h.prev, h.buf = nil, nil
				return err
			}
		}
		h.add(*m, b)
	}
	return nil
}

// add appends m, whose elements are b, to prev and buf.
func (h *HistoryCache) add(m Message, b []byte) {
	if len(b) > 0 && len(h.buf) > 1 {
		h.buf = append(h.buf, ',')
	}
	off := len(h.buf)
	h.buf = append(h.buf, b...)
	h.prev = append(h.prev, cachedMsg{m: m, off: off, end: len(h.buf)})
}

func lookup(cs []cachedMsg, m *Message) (cachedMsg, bool) {
	for _, c := range cs {
		if sameMessage(&c.m, m) {
			return c, true
		}
	}
	return cachedMsg{}, false
}

// key hashes the fields the OpenAI wires encode, with at most 64 bytes of
// each end of the content (sameMessage compares the rest).
func (h *HistoryCache) key(m *Message) uint64 {
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
func sameMessage(a, b *Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && sameSlice(a.ToolCalls, b.ToolCalls) && sameSlice(a.Thinking, b.Thinking)
}

// sameSlice is slices.Equal, at once for one backing array (the history's
// message compared with the copy the cache kept of it).
func sameSlice[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
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
// list (already JSON, in parts) where the placeholder's quoted string is.
func spliceList(body jsonObject, key string, list ...[]byte) (reqBody, error) {
	mark := "scv-history-" + newImageSlots().nonce
	body[key] = mark
	b, err := json.Marshal(body)
	if err != nil {
		return reqBody{}, err
	}
	q := []byte(`"` + mark + `"`)
	i := bytes.Index(b, q)
	if i < 0 {
		return reqBody{}, errHistoryPlaceholder
	}
	parts := append(append([][]byte{b[:i:i]}, list...), b[i+len(q):])
	return newBody(parts...), nil
}

var errHistoryPlaceholder = errors.New("encode request: the history placeholder is missing")

// reqBody is a request body held in parts (the history's buffer is sent
// as it is, not copied into one slice).
type reqBody struct {
	parts [][]byte
	size  int
}

func newBody(parts ...[]byte) reqBody {
	b := reqBody{parts: parts}
	for _, p := range parts {
		b.size += len(p)
	}
	return b
}

// reader reads the body from its start.
func (b reqBody) reader() io.Reader {
	rs := make([]io.Reader, len(b.parts))
	for i, p := range b.parts {
		rs[i] = bytes.NewReader(p)
	}
	return io.MultiReader(rs...)
}

// bytes is the body in one slice.
func (b reqBody) bytes() []byte {
	if len(b.parts) == 1 {
		return b.parts[0]
	}
	return bytes.Join(b.parts, nil)
}
