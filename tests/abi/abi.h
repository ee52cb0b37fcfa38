/* Shared by the ABI tests: our declarations of a vendor library's types
 * against the vendor's own header.
 *
 * Each test file is compiled twice (tests/abi/meson.build): with ABI_REAL
 * it includes the vendor's header (when __has_include finds it) and only
 * defines the tables abi_real[] and abi_real_names[]; without, it includes
 * our header, defines abi_ours[] from the same lists and compares the two
 * by entry name. Each entry is a struct's size and alignment, a field's
 * offset and size, an enum value, or a prototype: a function pointer type
 * spelled out once in the list is checked against our table's member on
 * one side and against the vendor's declaration on the other, so a
 * prototype that matches on both sides matches across them.
 *
 * Entries in a version group the vendor's header predates (a newer entry
 * point) are absent from abi_real[]; the comparison lists them and accepts
 * that only for their group. Names: the vendor's header maps an API name
 * to the versioned symbol it means (cuda.h: #define cuMemAlloc
 * cuMemAlloc_v2); the real side records that expansion, and the test
 * requires it to be a symbol our loader resolves. */
#ifndef GPUREADY_TEST_ABI_H
#define GPUREADY_TEST_ABI_H

#include <stddef.h>

struct abi_entry {
	const char *name;
	long long a, b; /* struct: size, alignment; field: offset, size; enum: value; prototype: compatible, 0 */
	unsigned group; /* 0: in every supported header; else the version group bit */
};

/* API name -> the symbol the header makes of it. */
struct abi_name {
	const char *api;
	const char *symbol;
};

/* What the real side defines (abi_have_header 0: header not found, tables
 * empty, abi_header_version says why). */
struct abi_real {
	int have_header;
	const char *header_version; /* "CUDA 11080", or the reason it is missing */
	unsigned groups;            /* the version groups this header has */
	const struct abi_entry *v;
	size_t n;
	const struct abi_name *names;
	size_t n_names;
};

#define ABI_S(T, g) { "sizeof " #T, (long long)sizeof(T), (long long)_Alignof(T), (g) },
#define ABI_F(T, f, g) { #T "." #f, (long long)offsetof(T, f), (long long)sizeof(((T *)0)->f), (g) },
#define ABI_E(v, g) { #v, (long long)(v), 0, (g) },
/* a prototype compared with our table's member (ours) or the header's
 * declaration of sym (real) */
#define ABI_P_OURS(table, sym, member, type, g) \
	{ #sym " prototype", __builtin_types_compatible_p(__typeof__(((table *)0)->member), type), 0, (g) },
/* name is the symbol's name stringified before the header's macros
 * rename it (cuda.h: cuMemAlloc -> cuMemAlloc_v2) */
#define ABI_P_REAL(name, sym, type, g) { name " prototype", __builtin_types_compatible_p(__typeof__(&sym), type), 0, (g) },
#define ABI_XSTR(x) ABI_STR(x)
#define ABI_STR(x) #x
#define ABI_NAME(api) { #api, ABI_XSTR(api) },

#define ABI_N(a) (sizeof(a) / sizeof((a)[0]))

#ifndef ABI_REAL
/* Compares ours with real by name; prints every mismatch and every entry
 * the header predates (with group_names[bit] naming the group); returns
 * the number of mismatches. */
int abi_compare(const char *lib, const struct abi_entry *ours, size_t n, const struct abi_real *real,
		const char *const *group_names);

/* Checks that each real name maps to a symbol in syms (n names, NULL
 * entries ignored); returns the number that do not. */
int abi_names_resolved(const char *lib, const struct abi_real *real, const char *const *syms, size_t n);

/* Prints the skip reason (with why scripts/nvidia-libs.sh could not fetch
 * the headers, from $GPUREADY_NVIDIA_DIR/unavailable) and returns 77
 * (Meson's skip) when the real side has no header; else 0. */
int abi_skip_without_header(const char *lib, const struct abi_real *real);
#endif

#endif
