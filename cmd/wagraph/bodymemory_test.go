package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestOversizedBodiesCostLittleMemory (issue 31, finding 2): a body of tiny
// strings to a route whose contract is a few fields (markRead's
// messageIds, a text send's mentions) costs the server little memory,
// however large it is announced or sent, and by whichever API: one request
// and four at once each grow the resident set of a real server process by
// less than 128 MiB, and a body read whole by a few times its size at
// most. Before, one 60 MiB markRead grew it by 1,039 MiB (four at once
// did not end within 2 minutes), a text send's 60 MiB of mentions by
// 1,134 MiB, an image send's 16 MiB of mentions by 331 MiB (8 MiB here:
// four of them are held whole, legitimately), a 1 MiB GraphQL markRead by
// 28 to 37 MiB.
func TestOversizedBodiesCostLittleMemory(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		return
	}
	dbtest.OneBackend(t, "a request body's memory, bounded before any storage is reached")
	if testing.Short() {
		t.Skip("runs a server process of its own")
	}
	child := startMemoryChild(t)
	const (
		huge      = 60 << 20
		maxGrowth = 128 << 10 // KiB
	)
	markRead := bodyOf(`{"messageIds":[`, `"a"`, `]}`)
	mentions := bodyOf(`{"number":"491701234567","text":"hi","mentions":[`, `"1"`, `]}`)
	imageMentions := bodyOf(`{"number":"491701234567","source":"aGk=","mentions":[`, `"1"`, `]}`)
	gqlMarkRead := bodyOf(`{"query":"mutation($ids:[ID!]){ markRead(sessionId:\"none\", chat:\"491701234567\", messageIds:$ids) }","variables":{"ids":[`, `"a"`, `]}}`)
	gqlMentions := bodyOf(`{"query":"mutation($m:[String!]){ sendText(sessionId:\"none\", input:{number:\"491701234567\", text:\"hi\", mentions:$m}) { messageId } }","variables":{"m":[`, `"1"`, `]}}`)
	for _, tt := range []struct {
		name    string
		path    string
		body    hugeBody
		size    int
		chunked bool
		want    string // the status of each answer
	}{
		{"markRead announced", "/api/v1/session/none/chat/491701234567/read", markRead, huge, false, "413"},
		{"markRead chunked", "/api/v1/session/none/chat/491701234567/read", markRead, huge, true, "413"},
		{"text mentions announced", "/api/v1/session/none/message/text", mentions, huge, false, "413"},
		{"text mentions chunked", "/api/v1/session/none/message/text", mentions, huge, true, "413"},
		// Within the limit of its route: refused while decoding, at the
		// first id past the rule, before any list is built.
		{"markRead within its limit", "/api/v1/session/none/chat/491701234567/read", markRead, 500 << 10, false, "400"},
		{"text mentions within its limit", "/api/v1/session/none/message/text", mentions, 1000 << 10, false, "400"},
		// A media send keeps --max-body (64 MiB) for its source: its
		// mentions are still counted while decoding.
		{"image mentions", "/api/v1/session/none/message/image", imageMentions, 8 << 20, false, "400"},
		// GraphQL's body is capped at 1 MiB; its lists are bounded before
		// gqlgen decodes the variables.
		{"GraphQL markRead", "/graphql", gqlMarkRead, 1000 << 10, false, "400"},
		{"GraphQL mentions", "/graphql", gqlMentions, 1000 << 10, false, "400"},
		{"GraphQL markRead announced", "/graphql", gqlMarkRead, huge, false, "413"},
		{"GraphQL markRead chunked", "/graphql", gqlMarkRead, huge, true, "413"},
	} {
		for _, n := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/%d at once", tt.name, n), func(t *testing.T) {
				before := child.settle(t)
				start := time.Now()
				var wg sync.WaitGroup
				statuses := make([]string, n)
				for i := range n {
					wg.Go(func() { statuses[i] = postBody(child.addr, tt.path, tt.body, tt.size, tt.chunked) })
				}
				wg.Wait()
				peak := memoryKiB(t, child.pid, "VmHWM")
				t.Logf("%d × %d KiB in %v: RSS %d KiB, peak +%d KiB", n, tt.size>>10, time.Since(start).Round(time.Millisecond), before, peak-before)
				for _, s := range statuses {
					if s != tt.want {
						t.Errorf("answered %s, want %s", s, tt.want)
					}
				}
				// Under 128 MiB, and a body read whole costs no more than a
				// few times itself (room for the race detector's shadow of
				// it, and 16 MiB for the runtime's own).
				bound := min(maxGrowth, 4*n*tt.size>>10+16<<10)
				if grew := peak - before; grew >= bound {
					t.Errorf("peak RSS grew by %d KiB; want under %d KiB", grew, bound)
				}
			})
		}
	}
}

// hugeBody is a JSON body that is one long list of one item.
type hugeBody struct{ head, item, tail string }

func bodyOf(head, item, tail string) hugeBody { return hugeBody{head, item, tail} }

// reader streams the body at about size bytes, without holding it.
func (b hugeBody) reader(size int) (io.Reader, int) {
	n := max(1, (size-len(b.head)-len(b.tail))/(len(b.item)+1))
	items := &repeatReader{unit: []byte(b.item + ","), left: (n - 1) * (len(b.item) + 1)}
	total := len(b.head) + items.left + len(b.item) + len(b.tail)
	return io.MultiReader(strings.NewReader(b.head), items, strings.NewReader(b.item+b.tail)), total
}

// repeatReader reads unit over and over, left bytes in all.
type repeatReader struct {
	unit []byte
	left int
	at   int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:min(len(p), n+r.left)], r.unit[r.at:])
		r.at = (r.at + c) % len(r.unit)
		n += c
		r.left -= c
	}
	return n, nil
}

// postBody POSTs the body at about size bytes with the child's token,
// announced (Content-Length) or chunked, as fast as the server takes it,
// and returns the status of the answer, or what went wrong.
func postBody(addr, path string, b hugeBody, size int, chunked bool) string {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	body, total := b.reader(size)
	framing := "Content-Length: " + strconv.Itoa(total)
	if chunked {
		framing = "Transfer-Encoding: chunked"
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: application/json\r\n%s\r\n\r\n", path, childToken, framing)
	go func() { // the body, until the server stops taking it
		w := bufio.NewWriterSize(conn, 64<<10)
		chunk := make([]byte, 32<<10)
		for {
			n, err := io.ReadFull(body, chunk)
			if n > 0 {
				if chunked {
					fmt.Fprintf(w, "%x\r\n", n)
				}
				if _, werr := w.Write(chunk[:n]); werr != nil {
					return
				}
				if chunked {
					_, _ = w.WriteString("\r\n")
				}
			}
			if err != nil {
				break
			}
		}
		if chunked {
			_, _ = w.WriteString("0\r\n\r\n")
		}
		_ = w.Flush()
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "no answer: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return strconv.Itoa(res.StatusCode)
}
