package mediakeep

// ClaimedBy is how many downloads of session sess the keeper has claimed
// (under way or waiting for a slot): tests wait for a claim pass with it.
func (k *Keeper) ClaimedBy(sess string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.perSess[sess]
}
