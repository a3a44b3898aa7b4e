/*
 * config/manifest.schema.json against the manifest parser's key tables
 * (gc_manifest_sections, lib/manifest.c): for each kind of mapping, the
 * schema's $defs/<kind>/properties hold exactly the keys the parser knows,
 * so neither can gain or lose a key without the other.
 */
#include <stdbool.h>

#include "check.h"
#include "package-impl.h"

#define SCHEMA "config/manifest.schema.json"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return n < sizeof buf - 1 ? buf : NULL;
}

/* Past the JSON value at p (string, object, array, scalar). */
static const char *skip_value(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p ? p + 1 : p;
	}
	if (*p == '{' || *p == '[') {
		int depth = 0;
		for (; *p; p++) {
			if (*p == '"') {
				p = skip_value(p) - 1;
				continue;
			}
			depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
			if (!depth)
				return p + 1;
		}
		return p;
	}
	while (*p && *p != ',' && *p != '}' && *p != ']')
		p++;
	return p;
}

/* Calls fn(name, len, value, user) for each member of the object at p
 * ('{'); stops when fn returns true and gives that value. */
static const char *members(const char *p, bool (*fn)(const char *, size_t, const char *, void *),
			   void *user)
{
	while (*p && *p != '{')
		p++;
	if (!*p)
		return NULL;
	for (p++;;) {
		while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r' || *p == ',')
			p++;
		if (*p != '"')
			return NULL;
		const char *name = p + 1, *end = skip_value(p) - 1;
		p = end + 1;
		while (*p == ' ' || *p == ':')
			p++;
		if (fn(name, (size_t)(end - name), p, user))
			return p;
		p = skip_value(p);
	}
}

static bool is_key(const char *name, size_t len, const char *value, void *user)
{
	(void)value;
	return strlen(user) == len && !strncmp(name, user, len);
}

static const char *member(const char *obj, const char *key)
{
	return obj ? members(obj, is_key, (void *)key) : NULL;
}

typedef struct props {
	const char *names[64];
	size_t lens[64];
	int n;
} props;

static bool collect(const char *name, size_t len, const char *value, void *user)
{
	(void)value;
	props *ps = user;
	if (ps->n < 64) {
		ps->names[ps->n] = name;
		ps->lens[ps->n++] = len;
	}
	return false;
}

static void test_schema_matches_key_tables(void)
{
	const char *text = slurp(SCHEMA);
	CHECK(text != NULL);
	const char *defs = member(text, "$defs");
	CHECK(defs != NULL);
	int sections = 0;
	for (const gc_manifest_section *s = gc_manifest_sections; s->name; s++, sections++) {
		const char *def = member(defs, s->name);
		if (!def)
			fprintf(stderr, "%s: no $defs/%s\n", SCHEMA, s->name);
		CHECK(def != NULL);
		/* testTensor: the mapping form is the second of its oneOf. */
		if (!strcmp(s->name, "testTensor")) {
			const char *alt = member(def, "oneOf");
			CHECK(alt != NULL);
			const char *q = strstr(alt, "\"type\": \"object\"");
			CHECK(q != NULL);
			while (q > alt && *q != '{')
				q--;
			def = q;
		}
		props ps = { .n = 0 };
		const char *pr = member(def, "properties");
		CHECK(pr != NULL);
		members(pr, collect, &ps);
		for (int i = 0; s->keys[i]; i++) {
			bool found = false;
			for (int j = 0; j < ps.n; j++)
				found |= strlen(s->keys[i]) == ps.lens[j] &&
					 !strncmp(ps.names[j], s->keys[i], ps.lens[j]);
			if (!found)
				fprintf(stderr, "%s: $defs/%s/properties lacks '%s', which the parser "
						"knows\n",
					SCHEMA, s->name, s->keys[i]);
			CHECK(found);
		}
		for (int j = 0; j < ps.n; j++) {
			bool found = false;
			for (int i = 0; s->keys[i]; i++)
				found |= strlen(s->keys[i]) == ps.lens[j] &&
					 !strncmp(ps.names[j], s->keys[i], ps.lens[j]);
			if (!found)
				fprintf(stderr, "%s: $defs/%s/properties has '%.*s', which the parser "
						"does not know\n",
					SCHEMA, s->name, (int)ps.lens[j], ps.names[j]);
			CHECK(found);
		}
		/* A key the schema does not list must be refused, as the parser does. */
		const char *ap = member(def, "additionalProperties");
		CHECK(ap != NULL && !strncmp(ap, "false", 5));
	}
	CHECK_INT(sections, 10);
}

TEST_MAIN({ "schema_matches_key_tables", test_schema_matches_key_tables })
