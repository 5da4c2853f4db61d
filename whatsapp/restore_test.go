package whatsapp

import (
	"context"
	"errors"
	"testing"
)

// linkedList is the session table's list of linked sessions, as the test
// sets it.
type linkedList struct {
	ids []string
	err error
}

func (l linkedList) Linked(context.Context) ([]string, error) { return l.ids, l.err }

// TestRestoreLinked: the manager's restore policy at start. A linked
// session is started (and connects); one deleted since the list was read
// is no failure; a list that cannot be read starts nothing but ends the
// restore (the server becomes ready); a restore the server's stop cuts
// short reports it did not run to its end. Each outcome is logged.
func TestRestoreLinked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.manager()
	st := e.pairQR(first, "s1", phone)
	first.Close()

	for _, tc := range []struct {
		name   string
		list   linkedList
		cancel bool // the server stops before the restore
		want   bool
		logged string
		absent string
	}{
		{name: "unreadable list", list: linkedList{err: errors.New("database gone")}, want: true,
			logged: "restoring the linked sessions failed: none was started", absent: "linked sessions started"},
		{name: "stopped", list: linkedList{ids: []string{"s1"}}, cancel: true, want: false,
			logged: "restoring the linked sessions stopped", absent: "restoring the session failed"},
		{name: "linked and deleted", list: linkedList{ids: []string{"s1", "gone"}}, want: true,
			logged: `msg="linked sessions started" sessions=2 failed=0`, absent: "restoring the session failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, logs := e.loggedManager()
			rctx, cancel := context.WithCancel(ctx)
			if tc.cancel {
				cancel()
			}
			defer cancel()
			if got := m.RestoreLinked(rctx, tc.list); got != tc.want {
				t.Errorf("RestoreLinked = %v, want %v", got, tc.want)
			}
			if len(logs.Lines(tc.logged)) != 1 || len(logs.Lines(tc.absent)) != 0 {
				t.Errorf("log: want %q once and no %q:\n%s", tc.logged, tc.absent, logs)
			}
			if tc.name != "linked and deleted" {
				return
			}
			if len(logs.Lines("the session was deleted before it was restored", "session_id=gone")) != 1 {
				t.Errorf("the deleted session is not logged at debug with its session_id:\n%s", logs)
			}
			got := e.waitStatus(m, "s1", StatusConnected)
			if got.JID != st.JID {
				t.Errorf("restored as %+v, want %s", got, st.JID)
			}
			e.settle(got)
		})
	}
}
