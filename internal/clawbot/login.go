package clawbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Login bounds.
const (
	// LoginTimeout is how long a login waits for the code to be scanned
	// and confirmed, over every code shown.
	LoginTimeout = 8 * time.Minute
	// statusPollTimeout bounds one get_qrcode_status long poll; the
	// server answers "wait" well before.
	statusPollTimeout = 40 * time.Second
	// maxCodes is how many codes one login shows (a code expires after a
	// few minutes; a new one replaces it).
	maxCodes = 3
)

// LoginOptions configure a QR login.
type LoginOptions struct {
	// BaseURL is the checked origin to log in at.
	BaseURL string
	HTTP    *http.Client
	// ShowCode is called with the content of each QR code to scan (a URL);
	// the caller draws it.
	ShowCode func(content string)
	// Progress is told each change of state: "scaned" (scanned, waiting
	// for confirmation on the phone), "expired" (a new code follows).
	Progress func(state string)
	// Timeout is LoginTimeout when 0.
	Timeout time.Duration
	// Interval spaces status polls that the server answered at once
	// (1 s when 0).
	Interval time.Duration
}

// qrStatus is get_qrcode_status's answer.
type qrStatus struct {
	Status   string `json:"status"`
	BotToken string `json:"bot_token"`
	BotID    string `json:"ilink_bot_id"`
	UserID   string `json:"ilink_user_id"`
	BaseURL  string `json:"baseurl"`
	status
}

// Login runs a QR login: it fetches a code, shows it, and long-polls its
// status until it is confirmed (the credentials), expires (a new code, up
// to three), or the time runs out.
func Login(ctx context.Context, o LoginOptions) (Credentials, error) {
	def(&o.Timeout, LoginTimeout)
	def(&o.Interval, time.Second)
	if o.HTTP == nil {
		o.HTTP = HTTPClient()
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for range maxCodes {
		var code struct {
			QRCode  string `json:"qrcode"`
			Content string `json:"qrcode_img_content"`
			status
		}
		if err := getJSON(ctx, o.HTTP, o.BaseURL+"/ilink/bot/get_bot_qrcode?bot_type=3", &code.status, &code); err != nil {
			return Credentials{}, loginErr(ctx, o.Timeout, fmt.Errorf("get a QR code: %w", err))
		}
		if code.QRCode == "" || code.Content == "" {
			return Credentials{}, errors.New("get a QR code: the answer has no qrcode or qrcode_img_content")
		}
		if o.ShowCode != nil {
			o.ShowCode(code.Content)
		}
		creds, expired, err := awaitScan(ctx, o, code.QRCode)
		if err != nil {
			return Credentials{}, loginErr(ctx, o.Timeout, err)
		}
		if !expired {
			return creds, nil
		}
		if o.Progress != nil {
			o.Progress("expired")
		}
	}
	return Credentials{}, fmt.Errorf("login failed: %d QR codes expired without a confirmed scan; run the login again", maxCodes)
}

func loginErr(ctx context.Context, limit time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("login gave up: the code was not scanned and confirmed within %v", limit)
	}
	return err
}

// awaitScan polls one code's status until it is confirmed or expires.
func awaitScan(ctx context.Context, o LoginOptions, qrcode string) (Credentials, bool, error) {
	last := ""
	statusURL := o.BaseURL + "/ilink/bot/get_qrcode_status?qrcode=" + url.QueryEscape(qrcode)
	for {
		pctx, cancel := context.WithTimeout(ctx, statusPollTimeout)
		var st qrStatus
		err := getJSON(pctx, o.HTTP, statusURL, &st.status, &st)
		timedOut := ctx.Err() == nil && pctx.Err() != nil
		cancel()
		if timedOut {
			continue // a long poll that ended without news
		}
		if err != nil {
			return Credentials{}, false, fmt.Errorf("QR code status: %w", err)
		}
		switch st.Status {
		case "wait", "":
		case "scaned", "scanned":
			if last != "scaned" && o.Progress != nil {
				o.Progress("scaned")
			}
			last = "scaned"
		case "expired":
			return Credentials{}, true, nil
		case "confirmed":
			return confirmed(o, st)
		default:
			return Credentials{}, false, fmt.Errorf("QR code status: unknown status %q", cleanMsg(st.Status))
		}
		select {
		case <-ctx.Done():
			return Credentials{}, false, ctx.Err()
		case <-time.After(o.Interval):
		}
	}
}

func confirmed(o LoginOptions, st qrStatus) (Credentials, bool, error) {
	var missing []string
	for _, f := range []struct{ name, v string }{{"bot_token", st.BotToken}, {"ilink_bot_id", st.BotID}, {"ilink_user_id", st.UserID}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return Credentials{}, false, fmt.Errorf("login failed: the confirmation has no %v; nothing was saved", missing)
	}
	base := o.BaseURL
	if st.BaseURL != "" {
		b, err := CheckBaseURL(st.BaseURL)
		if err != nil {
			return Credentials{}, false, fmt.Errorf("login failed: the confirmation names an unusable API address: %v", err)
		}
		base = b
	}
	return Credentials{Token: Token(st.BotToken), BotID: st.BotID, UserID: st.UserID, BaseURL: base}, false, nil
}

// getJSON GETs url and decodes its JSON answer into v; an HTTP error or a
// non-zero ret/errcode (decoded into st) is an *APIError.
func getJSON(ctx context.Context, c *http.Client, u string, st *status, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return transportError(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxSmallBody+1))
	if err != nil {
		return transportError(err)
	}
	if len(b) > maxSmallBody {
		return fmt.Errorf("the answer is larger than %d bytes", maxSmallBody)
	}
	jerr := json.Unmarshal(b, v)
	if resp.StatusCode < 200 || resp.StatusCode > 299 || st.failed() {
		return st.err("login", resp.StatusCode)
	}
	if jerr != nil {
		return fmt.Errorf("the answer is not the expected JSON object: %v", cleanMsg(jerr.Error()))
	}
	return nil
}
