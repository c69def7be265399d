package ledger

import "testing"

// TestPaceAfter: the sequencer goes on at once after a full batch, gathers
// after a partial one, and waits for work after an empty one.
func TestPaceAfter(t *testing.T) {
	for _, c := range []struct {
		n, batch int
		want     pace
	}{
		{1000, 1000, sequenceNow},
		{1, 1, sequenceNow},
		{999, 1000, gatherFirst},
		{1, 1000, gatherFirst},
		{0, 1000, waitForWork},
	} {
		if got := paceAfter(c.n, c.batch); got != c.want {
			t.Errorf("paceAfter(%d, %d) = %d, want %d", c.n, c.batch, got, c.want)
		}
	}
}
