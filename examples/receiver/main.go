// The example internal service in Go: receives the gateway's webhook deliveries and
// verifies each (Standard Webhooks) with the standard library only (crypto/hmac,
// crypto/sha256, encoding/base64).
//
//	go run examples/receiver/main.go whsec_...   (or EDGEPAY_RECEIVER_SECRET=whsec_...)
//	EDGEPAY_RECEIVER_PORT=8789 (default; 0 picks a free port), always on 127.0.0.1
//
// Verified delivery -> one printed line and 204. A webhook-id seen before -> 204, not
// handled again. Bad or missing signature, or a timestamp more than 5 minutes away -> a
// warning and 401.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// How far webhook-timestamp may be from our clock: the gateway stamps every attempt
	// with its own time, so only a replayed (captured) request is ever this old.
	tolerance = 5 * time.Minute
	// The largest body read, in bytes; larger deliveries are answered 413.
	maxBodyBytes = 1 << 20
	// How many webhook-ids are remembered for deduplication (a real service keeps them in
	// its database, written in the same transaction as what the event changes).
	rememberedIDs = 10000
)

// secretKey decodes the base64 part of a whsec_ secret: the HMAC key.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err == nil && len(key) == 0 {
		err = errors.New("the secret is empty")
	}
	return key, err
}

// verify checks a delivery's Standard Webhooks signature over the exact body bytes. The
// signed content is "{webhook-id}.{webhook-timestamp}.{body}"; webhook-signature holds one
// or more space-separated "v1,<base64 HMAC-SHA256>" (two while a rotated-out secret still
// signs), and one matching is enough.
func verify(key []byte, header http.Header, body []byte, now time.Time) error {
	id := header.Get("webhook-id")
	timestamp := header.Get("webhook-timestamp")
	signatures := header.Get("webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("webhook-timestamp is not unix seconds")
	}
	if skew := now.Sub(time.Unix(seconds, 0)); skew > tolerance || skew < -tolerance {
		return errors.New("webhook-timestamp is more than 5 minutes away")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, candidate := range strings.Split(signatures, " ") {
		version, signature, found := strings.Cut(candidate, ",")
		// Constant time, so the answer's timing says nothing about the right signature.
		if found && version == "v1" && hmac.Equal([]byte(signature), expected) {
			return nil
		}
	}
	return errors.New("no v1 signature matches")
}

// seenIDs holds the last rememberedIDs webhook-ids, oldest forgotten first.
type seenIDs struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
}

// add remembers id; false when it was already there.
func (s *seenIDs) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids[id] {
		return false
	}
	s.ids[id] = true
	s.order = append(s.order, id)
	if len(s.order) > rememberedIDs {
		delete(s.ids, s.order[0])
		s.order = s.order[1:]
	}
	return true
}

func (s *seenIDs) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
}

// envelope is the part of the event this example prints.
type envelope struct {
	EventType string         `json:"event_type"`
	EventID   string         `json:"event_id"`
	Data      map[string]any `json:"data"`
}

func handler(key []byte, seen *seenIDs) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		if err := verify(key, r.Header, body, time.Now()); err != nil {
			log.Printf("receiver: rejected a delivery: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("webhook-id")
		// At least once: a retry or an admin replay carries the same webhook-id.
		if !seen.add(id) {
			fmt.Printf("receiver: duplicate %s, already handled\n", id)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var event envelope
		if err := json.Unmarshal(body, &event); err != nil {
			seen.forget(id)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		reference, ok := event.Data["reference"].(string)
		if !ok {
			reference = "-"
		}
		// Answer fast (the gateway waits 15 s at most): hand slow work to a queue.
		fmt.Printf("receiver: verified %s %s reference=%s\n", event.EventType, event.EventID, reference)
		w.WriteHeader(http.StatusNoContent)
	}
}

func main() {
	log.SetFlags(0)
	secret := os.Getenv("EDGEPAY_RECEIVER_SECRET")
	if len(os.Args) > 1 {
		secret = os.Args[1]
	}
	if secret == "" {
		fmt.Fprintln(os.Stderr, "usage: go run examples/receiver/main.go <whsec_...> (or EDGEPAY_RECEIVER_SECRET)")
		os.Exit(2)
	}
	key, err := secretKey(secret)
	if err != nil {
		fmt.Fprintf(os.Stderr, "receiver: the secret is not whsec_<base64>: %v\n", err)
		os.Exit(2)
	}
	port := os.Getenv("EDGEPAY_RECEIVER_PORT")
	if port == "" {
		port = "8789"
	}
	listener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		log.Fatalf("receiver: %v", err)
	}
	fmt.Printf("receiver: listening on http://%s/\n", listener.Addr())
	server := &http.Server{
		Handler:           handler(key, &seenIDs{ids: map[string]bool{}}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Fatal(server.Serve(listener))
}
