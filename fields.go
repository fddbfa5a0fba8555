package xstream

// Looking up an entry's fields by name. An entry may repeat a name (as a
// Redis stream entry may); Value gives the first value, Values all of
// them, in the order they were added.

// Value returns the value of the first field of e named name, and whether
// there is one. O(fields).
func (e Entry) Value(name string) (string, bool) { return fieldValue(e.Fields, name) }

// Values returns the values of the fields of e named name, in order; nil
// when there is none. O(fields).
func (e Entry) Values(name string) []string { return fieldValues(e.Fields, name) }

// Value returns the value of the first field of r named name, and whether
// there is one. O(fields).
func (r Record) Value(name string) (string, bool) { return fieldValue(r.Fields, name) }

// Values returns the values of the fields of r named name, in order; nil
// when there is none. O(fields).
func (r Record) Values(name string) []string { return fieldValues(r.Fields, name) }

func fieldValue(fs []Field, name string) (string, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

func fieldValues(fs []Field, name string) []string {
	var vs []string
	for _, f := range fs {
		if f.Name == name {
			vs = append(vs, f.Value)
		}
	}
	return vs
}
