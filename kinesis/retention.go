package kinesis

import (
	"context"
	"time"
)

// Retention limits, as in Kinesis.
const (
	minRetentionHours = 24
	maxRetentionHours = 8760
)

type retentionIn struct {
	RetentionPeriodHours *num `json:"RetentionPeriodHours"`
	streamRef
}

func (h *Handler) increaseRetention(ctx context.Context, in *retentionIn) (any, *apiError) {
	return h.setRetention(ctx, in, true)
}

func (h *Handler) decreaseRetention(ctx context.Context, in *retentionIn) (any, *apiError) {
	return h.setRetention(ctx, in, false)
}

// setRetention: IncreaseStreamRetentionPeriod and
// DecreaseStreamRetentionPeriod. Shortening the period drops the records
// past it at once.
func (h *Handler) setRetention(ctx context.Context, in *retentionIn, increase bool) (any, *apiError) {
	var c checker
	c.intRange("retentionPeriodHours", in.RetentionPeriodHours, true, 1, 2147483647)
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	_, m, e := h.lookup(ctx, name, true)
	if e != nil {
		return nil, e
	}
	if m.Status != statusActive {
		return nil, h.notActive(name, m.Status)
	}
	eng, e := h.engine(ctx, name, m)
	if e != nil {
		return nil, e
	}
	hours := int64(*in.RetentionPeriodHours)
	if hours < minRetentionHours {
		return nil, clientErr(typeInvalidArgument, "Minimum allowed retention period is %d hours. Requested retention period (%d hours) is too short.", minRetentionHours, hours)
	}
	if hours > maxRetentionHours {
		return nil, clientErr(typeInvalidArgument, "Maximum allowed retention period is %d hours. Requested retention period (%d hours) is too long.", maxRetentionHours, hours)
	}
	curHours := m.Retention
	if increase && curHours > hours {
		return nil, clientErr(typeInvalidArgument, "Requested retention period (%d hours) for stream %s can not be shorter than existing retention period (%d hours). Use DecreaseRetentionPeriod API.", hours, name, curHours)
	}
	if !increase && curHours < hours {
		return nil, clientErr(typeInvalidArgument, "Requested retention period (%d hours) for stream %s can not be longer than existing retention period (%d hours). Use IncreaseRetentionPeriod API.", hours, name, curHours)
	}
	if err := eng.SetRetention(ctx, time.Duration(hours)*time.Hour); err != nil {
		return nil, h.engineErr(name, err)
	}
	_, err := h.cat.update(ctx, func(c *catalog) error {
		if m := c.Streams[name]; m != nil {
			m.Retention = hours
			return nil
		}
		return errNoChange
	})
	if err != nil {
		return nil, internal(err)
	}
	return empty{}, nil
}
