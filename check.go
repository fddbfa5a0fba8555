package xstream

import (
	"fmt"

	"github.com/xstreamgo/xstream/internal/store"
)

// checkLocked verifies the invariants of the stream and returns the first
// one broken: those of its storage (store.Blocks.Check) and of its groups.
// In each group, every pending entry owned by a consumer is in that
// consumer's PEL and every ID of a consumer's PEL is pending to it in the
// group's; consumer numbers name their consumers; the groups with a
// dead-letter policy are those counted. It costs O(N + P) and
// serves tests and the checking of loaded data.
func (s *Stream) checkLocked() error {
	if err := s.st.Check(); err != nil {
		return fmt.Errorf("stream %q: %w", s.Name(), err)
	}
	var err error
	policies := 0
	s.eachGroupLocked(func(g *group) {
		if g.dead.MaxDeliveries != 0 {
			policies++
		}
		if err == nil {
			if e := g.checkLocked(); e != nil {
				err = fmt.Errorf("stream %q, group %q: %w", s.Name(), g.name, e)
			}
		}
	})
	if err == nil && policies != s.deadPolicies {
		err = fmt.Errorf("stream %q: %d groups with a dead-letter policy, counted %d", s.Name(), policies, s.deadPolicies)
	}
	if e := s.idmp.check(); err == nil && e != nil {
		err = fmt.Errorf("stream %q: %w", s.Name(), e)
	}
	return err
}

func (g *group) checkLocked() error {
	var err error
	owned := 0
	g.pel.Ascend(store.ID{}, store.MaxID, func(id sID, rec *nack) bool {
		if rec.owner == 0 {
			if rec.deliveryMs != 0 {
				err = fmt.Errorf("entry %s given back with delivery time %d", ID(id), rec.deliveryMs)
			}
			return err == nil
		}
		if int(rec.owner) >= len(g.byNum) || g.byNum[rec.owner] == nil {
			err = fmt.Errorf("entry %s owned by unknown consumer number %d", ID(id), rec.owner)
			return false
		}
		if g.byNum[rec.owner].pel.Get(id) == nil {
			err = fmt.Errorf("entry %s owned by %q is not in its PEL", ID(id), g.byNum[rec.owner].name)
			return false
		}
		owned++
		return true
	})
	if err != nil {
		return err
	}
	consumers, inPELs := 0, 0
	eachConsumer(g, func(c *consumer) {
		consumers++
		if err != nil {
			return
		}
		if int(c.num) >= len(g.byNum) || g.byNum[c.num] != c {
			err = fmt.Errorf("consumer %q has number %d, which names another", c.name, c.num)
			return
		}
		inPELs += c.pel.Len()
		c.pel.Ascend(store.ID{}, store.MaxID, func(id sID, _ *struct{}) bool {
			if rec := g.pel.Get(id); rec == nil || rec.owner != c.num {
				err = fmt.Errorf("entry %s in %q's PEL is not pending to it", ID(id), c.name)
			}
			return err == nil
		})
	})
	if err != nil {
		return err
	}
	if inPELs != owned {
		return fmt.Errorf("consumers' PELs hold %d entries, the group's PEL %d owned ones", inPELs, owned)
	}
	named := 0
	for _, c := range g.byNum {
		if c != nil {
			named++
		}
	}
	if named != consumers {
		return fmt.Errorf("%d consumers, %d consumer numbers in use", consumers, named)
	}
	return nil
}
