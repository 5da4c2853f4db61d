package mediakeep

// ClaimedBy is how many downloads of session sess the keeper has claimed
// (under way or waiting for a slot): tests wait for a claim pass with it.
func (k *Keeper) ClaimedBy(sess string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.perSess[sess]
}

// Waiting is how many claimed downloads wait for a slot of the pool.
func (k *Keeper) Waiting() int { return k.pool.Waiting() }
