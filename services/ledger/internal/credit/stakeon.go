package credit

import "github.com/foundryhq/foundry/services/platform/fault"

// CheckStakeOn refuses staker a stake on an idea that waits for an
// operator's review (pending) unless staker created it. A pending idea's
// name and values are its creator's own claims, which its creator may
// still rewrite: another contributor's stake would bet on what the
// creator can change after it. Once an operator accepted them, only
// operators change them (and every change is kept as a revision), so
// anyone may stake. A dry run is refused alike: it projects the same
// stake.
func CheckStakeOn(ideaID string, pending bool, creator, staker string) error {
	if !pending || (creator != "" && staker == creator) {
		return nil
	}
	return fault.New(fault.Conflict,
		"idea %s waits for an operator to accept its name and values: until then only its creator may stake on it", ideaID)
}
