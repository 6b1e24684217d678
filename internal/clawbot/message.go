package clawbot

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// maxStringID bounds a message id sent as a string.
const maxStringID = 256

// Message types and item types of iLink messages.
const (
	typeUser = 1 // a person's message; 2 is the bot's own
	itemText = 1
)

// Message is one polled message as the bridge sees it.
type Message struct {
	// ID is message_id exactly as sent: the digits of a uint64 number, or
	// the text of a string of at most 256 bytes. "" when it had neither.
	ID           string
	From         string
	GroupID      string
	ContextToken string
	// Text joins the message's text items with newlines.
	Text string
	// Accept says the message is to be answered: a user message with a
	// sender, an id, a context token and non-empty text.
	Accept bool
}

// wireMessage is the part of an iLink message the bridge reads.
type wireMessage struct {
	ID           json.RawMessage `json:"message_id"`
	From         string          `json:"from_user_id"`
	GroupID      string          `json:"group_id"`
	Type         int             `json:"message_type"`
	ContextToken string          `json:"context_token"`
	Items        []struct {
		Type int `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text_item"`
	} `json:"item_list"`
}

// ParseMessage reads one polled message. It never fails: what cannot be
// read is a message that is not accepted (and, without an id, cannot even
// be remembered as seen).
func ParseMessage(raw json.RawMessage) Message {
	var idOnly struct {
		ID json.RawMessage `json:"message_id"`
	}
	if json.Unmarshal(raw, &idOnly) != nil {
		return Message{}
	}
	m := Message{ID: messageID(idOnly.ID)}
	var w wireMessage
	if json.Unmarshal(raw, &w) != nil {
		return m
	}
	m.From, m.GroupID, m.ContextToken = w.From, w.GroupID, w.ContextToken
	var texts []string
	for _, it := range w.Items {
		if it.Type == itemText && it.Text != nil {
			texts = append(texts, it.Text.Text)
		}
	}
	m.Text = strings.Join(texts, "\n")
	m.Accept = m.ID != "" && w.Type == typeUser && m.From != "" && m.ContextToken != "" && strings.TrimSpace(m.Text) != ""
	return m
}

// messageID is the exact text of a message_id: a JSON number that is a
// uint64 (its digits as written), or a non-empty string of at most 256
// bytes. Anything else is "".
func messageID(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil || s == "" || len(s) > maxStringID {
			return ""
		}
		return s
	}
	s := string(raw)
	if _, err := strconv.ParseUint(s, 10, 64); err != nil {
		return ""
	}
	return s
}
