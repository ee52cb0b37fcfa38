/* Shared by the ABI tests: our declarations of a vendor library's types
 * against the vendor's own header.
 *
 * Each test file is compiled twice (tests/abi/meson.build): with ABI_REAL
 * it includes the vendor's header (ABI_HEADER, a full path, when
 * __has_include finds it there) and only defines the table abi_real[] and
 * the name map; without, it includes our header, defines abi_ours[] from
 * the same lists and compares the two by entry name. The two headers
 * declare the same names, so they cannot meet in one translation unit.
 * Each entry is a struct's size and alignment, a field's offset and size,
 * an enum or #define value, or a prototype: a function pointer type
 * spelled out once in the list is checked against our table's member on
 * one side and against the vendor's declaration on the other, so a
 * prototype that matches on both sides matches across them.
 *
 * Entries in a version group the vendor's header predates (a newer entry
 * point) are absent from abi_real[]; the comparison lists them and accepts
 * that only for their group. Names: the vendor's header maps an API name
 * to the versioned symbol it means (cuda.h: #define cuMemAlloc
 * cuMemAlloc_v2); the real side records that expansion, and the test
 * requires it to be a symbol our loader resolves. Where the mapping moved
 * between releases (cuda.h 11.8 maps cuGraphInstantiate to
 * cuGraphInstantiate_v2, 12.0+ to cuGraphInstantiateWithFlags), the
 * header at hand decides which name is required, and our table holds
 * both.
 *
 * abi_cover() keeps the lists complete: every enumerator, numeric #define,
 * typedef and function-pointer member our header declares must have its
 * entry, so a value added to our header without a test fails here. */
#ifndef GPUREADY_TEST_ABI_H
#define GPUREADY_TEST_ABI_H

#include <stddef.h>

struct abi_entry {
	const char *name;
	long long a, b; /* struct: size, alignment; field: offset, size; enum: value; prototype: compatible, 0 */
	unsigned group; /* 0: in every supported header; else the version group bit */
	const char *symbol; /* real prototype: the name the header declares it under (cuda.h
			     * #defines cuEventElapsedTime as cuEventElapsedTime_v2), else NULL */
};

/* API name -> the symbol the header makes of it. */
struct abi_name {
	const char *api;
	const char *symbol;
};

/* What the real side defines (have_header 0: header not found, tables
 * empty, header_version says why). */
struct abi_real {
	int have_header;
	const char *header_version; /* "cuda.h of CUDA_VERSION 11080", or why it is missing */
	int from_nvidia_dir;        /* looked for in scripts/nvidia-libs.sh's directory */
	unsigned groups;            /* the version groups this header has */
	const struct abi_entry *v;
	size_t n;
	const struct abi_name *names;
	size_t n_names;
	/* values only known at run time (a field of an initializer macro's
	 * compound literal), or NULL */
	const struct abi_entry *(*runtime)(size_t *n);
};

#define ABI_S(T, g) { "sizeof " #T, (long long)sizeof(T), (long long)_Alignof(T), (g), NULL },
#define ABI_F(T, f, g) { #T "." #f, (long long)offsetof(T, f), (long long)sizeof(((T *)0)->f), (g), NULL },
#define ABI_E(v, g) { #v, (long long)(v), 0, (g), NULL },
/* a value under a name of the test's own (an expression, not a macro) */
#define ABI_V(name, v, g) { name, (long long)(v), 0, (g), NULL },
/* a prototype compared with our table's member (ours) or the header's
 * declaration of sym (real) */
#define ABI_P_OURS(table, sym, member, type, g) \
	{ #sym " prototype", __builtin_types_compatible_p(__typeof__(((table *)0)->member), type), 0, (g), NULL },
/* name is the symbol's name stringified before the header's macros
 * rename it (cuda.h: cuMemAlloc -> cuMemAlloc_v2), sym the name after:
 * called from a macro that passes sym on expanded */
#define ABI_P_REAL(name, sym, type, g) \
	{ name " prototype", __builtin_types_compatible_p(__typeof__(&sym), type), 0, (g), #sym },
#define ABI_XSTR(x) ABI_STR(x)
#define ABI_STR(x) #x
#define ABI_NAME(api) { #api, ABI_XSTR(api) },

#define ABI_N(a) (sizeof(a) / sizeof((a)[0]))

/* A runtime table: fn returns list (ABI_V entries with non-constant
 * values) from static storage, at most 16 entries. */
#define ABI_RUNTIME_FN(fn, list)                                                                         \
	static const struct abi_entry *fn(size_t *n)                                                     \
	{                                                                                                \
		static struct abi_entry keep[16];                                                        \
		const struct abi_entry v[] = { list };                                                   \
		_Static_assert(sizeof(v) <= sizeof(keep), "ABI_RUNTIME_FN: more than 16 entries");       \
		for (size_t i = 0; i < ABI_N(v); i++)                                                     \
			keep[i] = v[i];                                                                  \
		*n = ABI_N(v);                                                                           \
		return keep;                                                                             \
	}

#ifndef ABI_REAL
/* Compares ours with real by name (and, where both have one, the runtime
 * tables); prints every mismatch, every entry the header predates (with
 * group_names[bit] naming the group) and a summary with the header's
 * version; returns the number of mismatches. */
int abi_compare(const char *lib, const struct abi_entry *ours, size_t n,
		const struct abi_entry *(*ours_runtime)(size_t *n), const struct abi_real *real,
		const char *const *group_names);

/* Checks that each real name maps to a symbol in syms (n names, NULL
 * entries ignored), printing the names a header renames; returns the
 * number that do not. */
int abi_names_resolved(const char *lib, const struct abi_real *real, const char *const *syms, size_t n);

/* Checks that each of syms (our loader's table) has a "<sym> prototype"
 * entry in ours; returns the number that do not. */
int abi_protos_cover(const char *lib, const struct abi_entry *ours, size_t n, const char *const *syms,
		     size_t n_syms);

/* Reads our header ($GPUREADY_SOURCE_DIR/header) and checks that every
 * enumerator ("NAME = ..." at a line's start), numeric #define, typedef
 * name and function-pointer member it declares is covered: an entry of
 * ours (or of ours_runtime) named NAME, "sizeof NAME" or "NAME.<field>",
 * or for a member, one of members[]. except[] (NULL-terminated) lists
 * gpuready's own names, no vendor's ("PREFIX*": all that start so). Returns the number not covered (1 when the
 * header cannot be read). */
int abi_cover(const char *lib, const char *header, const struct abi_entry *ours, size_t n,
	      const struct abi_entry *(*ours_runtime)(size_t *n), const char *const *members, size_t n_members,
	      const char *const *except);

/* Prints the skip reason (with why scripts/nvidia-libs.sh could not fetch
 * the headers, from $GPUREADY_NVIDIA_DIR/unavailable, where the header
 * was looked for there) and returns 77
 * (Meson's skip) when the real side has no header; else prints the
 * header's version and returns 0. */
int abi_skip_without_header(const char *lib, const struct abi_real *real);
#endif

#endif
