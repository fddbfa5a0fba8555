package kinesis

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Tag limits, as in Kinesis.
const (
	maxTagsPerStream = 50
	maxTagsPerCall   = 50
)

type addTagsIn struct {
	Tags map[string]string `json:"Tags"`
	streamRef
}

// tagCharOK reports whether r may appear in a tag: Unicode letters,
// digits, white space and _ . / = + - % @.
func tagCharOK(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' || strings.ContainsRune("_./=+-%@", r)
}

// checkTagMap validates a Tags map as Kinesis's model does.
func checkTagMap(c *checker, at string, tags map[string]string, required bool) {
	if tags == nil {
		if required {
			c.fail("null", at, "Member must not be null")
		}
		return
	}
	keys := slices.Sorted(maps.Keys(tags))
	var parts []string
	keyOK, valOK := true, true
	for _, k := range keys {
		parts = append(parts, k+"="+tags[k])
		keyOK = keyOK && javaLen(k) >= 1 && javaLen(k) <= 128
		valOK = valOK && javaLen(tags[k]) <= 256
	}
	v := quoted("{" + strings.Join(parts, ", ") + "}")
	if len(tags) < 1 {
		c.fail(v, at, "Member must have length greater than or equal to 1")
	}
	if len(tags) > maxTagsPerCall {
		c.fail(v, at, "Member must have length less than or equal to "+strconv.Itoa(maxTagsPerCall))
	}
	if !keyOK {
		c.fail(v, at, "Map keys must satisfy constraint: [Member must have length less than or equal to 128, Member must have length greater than or equal to 1]")
	}
	if !valOK {
		c.fail(v, at, "Map value must satisfy constraint: [Member must have length less than or equal to 256, Member must have length greater than or equal to 0]")
	}
}

// checkTags refuses tags with characters Kinesis refuses.
func (h *Handler) checkTags(tags map[string]string, _ int) *apiError {
	for k, v := range tags {
		for _, s := range []string{k, v} {
			if strings.IndexFunc(s, func(r rune) bool { return !tagCharOK(r) }) >= 0 {
				return clientErr(typeInvalidArgument, "Some tags contain invalid characters. Valid characters: Unicode letters, digits, white space, _ . / = + - %% @.")
			}
		}
	}
	return nil
}

// addTags: AddTagsToStream, up to 50 tags a stream.
func (h *Handler) addTags(ctx context.Context, in *addTagsIn) (any, *apiError) {
	var c checker
	checkTagMap(&c, "tags", in.Tags, true)
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	if e := h.checkTags(in.Tags, 0); e != nil {
		return nil, e
	}
	_, err := h.cat.update(ctx, func(c *catalog) error {
		m := c.Streams[name]
		if m == nil {
			return h.streamNotFound(name)
		}
		all := maps.Clone(m.Tags)
		if all == nil {
			all = map[string]string{}
		}
		maps.Copy(all, in.Tags)
		if len(all) > maxTagsPerStream {
			return clientErr(typeInvalidArgument, "Failed to add tags to stream %s under account %s because a given stream cannot have more than %d tags associated with it.",
				name, h.cfg.account, maxTagsPerStream)
		}
		m.Tags = all
		return nil
	})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	return empty{}, nil
}

type removeTagsIn struct {
	TagKeys []string `json:"TagKeys"`
	streamRef
}

// removeTags: RemoveTagsFromStream.
func (h *Handler) removeTags(ctx context.Context, in *removeTagsIn) (any, *apiError) {
	var c checker
	if in.TagKeys == nil {
		c.fail("null", "tagKeys", "Member must not be null")
	} else {
		v := quoted("[" + strings.Join(in.TagKeys, ", ") + "]")
		if len(in.TagKeys) < 1 {
			c.fail(v, "tagKeys", "Member must have length greater than or equal to 1")
		}
		if len(in.TagKeys) > maxTagsPerCall {
			c.fail(v, "tagKeys", "Member must have length less than or equal to "+strconv.Itoa(maxTagsPerCall))
		}
		for _, k := range in.TagKeys {
			if javaLen(k) < 1 || javaLen(k) > 128 {
				c.fail(v, "tagKeys", "Member must satisfy constraint: [Member must have length less than or equal to 128, Member must have length greater than or equal to 1]")
				break
			}
		}
	}
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	keys := map[string]string{}
	for _, k := range in.TagKeys {
		keys[k] = ""
	}
	if e := h.checkTags(keys, 0); e != nil {
		return nil, e
	}
	_, err := h.cat.update(ctx, func(c *catalog) error {
		m := c.Streams[name]
		if m == nil {
			return h.streamNotFound(name)
		}
		for _, k := range in.TagKeys {
			delete(m.Tags, k)
		}
		return nil
	})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	return empty{}, nil
}

type listTagsIn struct {
	Limit                *num    `json:"Limit"`
	ExclusiveStartTagKey *string `json:"ExclusiveStartTagKey"`
	streamRef
}

type tagOut struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

// listTags: ListTagsForStream, by key, paged by Limit (50 by default)
// and ExclusiveStartTagKey.
func (h *Handler) listTags(ctx context.Context, in *listTagsIn) (any, *apiError) {
	var c checker
	c.intRange("limit", in.Limit, false, 1, 50)
	c.str("exclusiveStartTagKey", in.ExclusiveStartTagKey, strRule{min: 1, max: 128})
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	_, m, e := h.lookup(ctx, name, true)
	if e != nil {
		return nil, e
	}
	limit := 50
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	out := struct {
		Tags        []tagOut `json:"Tags"`
		HasMoreTags bool     `json:"HasMoreTags"`
	}{Tags: []tagOut{}}
	for _, k := range slices.Sorted(maps.Keys(m.Tags)) {
		if in.ExclusiveStartTagKey != nil && k <= *in.ExclusiveStartTagKey {
			continue
		}
		if len(out.Tags) == limit {
			out.HasMoreTags = true
			break
		}
		out.Tags = append(out.Tags, tagOut{k, m.Tags[k]})
	}
	return out, nil
}
