/* The MTU remedy's readers and editors of network configuration, pure
 * functions of text (remedy_mtu.c uses them; tests/unit/test_fix_mtu.c
 * tests them): systemd-networkd's [Match] Name=, ifupdown's stanzas,
 * NetworkManager's keyfiles and netplan's YAML. */
#ifndef GPUREADY_FIX_MTU_H
#define GPUREADY_FIX_MTU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/strbuf.h"

/* ---- systemd-networkd (systemd.network(5)) ---- */

/* Does a .network file (text) match the interface? 1 yes, 0 no, -EINVAL
 * when it cannot be told from the name alone ([Match] conditions other
 * than Name=, which need the device's properties). No condition at all
 * matches every interface. Name= holds space-separated shell globs, a
 * leading "!" inverts the list, an empty assignment resets it. */
int mtu_networkd_match(const char *text, const char *iface);
/* The MTUBytes= of the [Link] section (the last one), 0 when none. */
int64_t mtu_networkd_mtu(const char *text);

/* ---- ifupdown (interfaces(5)) ---- */

/* Does text hold an `iface IFACE ...` stanza? */
bool mtu_ifupdown_has(const char *text, const char *iface);
/* text with the stanzas of iface given `mtu N`: each `mtu` option line of
 * them changed (its indentation kept), or when none has one, a line added
 * after the last option line of the first stanza; every other byte kept.
 * Returns 0, -ENOENT when there is no stanza, -EINVAL when a line is
 * continued with a backslash (left to the operator). */
int mtu_ifupdown_edit(const char *text, const char *iface, int64_t mtu, struct strbuf *out);
/* The `source` and `source-directory` lines of an interfaces file, as
 * written (strv of "source PATH" / "source-directory PATH" words 0,1 joined
 * by a tab). */
struct strv;
void mtu_ifupdown_sources(const char *text, struct strv *out);

/* ---- NetworkManager keyfiles (nm-settings-keyfile(5)) ---- */

/* The value of key in [section] (the last one, trimmed); NULL when none. */
char *mtu_keyfile_get(const char *text, const char *section, const char *key);
/* text with [ethernet] mtu=N: its mtu line changed, or a line added at the
 * end of the section, or the section added at the end; every other line
 * kept byte for byte. */
void mtu_keyfile_edit(const char *text, int64_t mtu, struct strbuf *out);

/* ---- netplan (netplan's YAML reference) ---- */

/* A device definition that configures an interface. */
struct mtu_netplan_dev {
	char *type;          /* "ethernets", "bonds", ... */
	char *id;            /* its ID under the type */
	int64_t mtu;         /* its mtu:, 0 when not set here */
	char *renderer;      /* the renderer this file sets for it: NULL none */
	int renderer_level;  /* 0 global (network:), 1 the type, 2 the device */
};
void mtu_netplan_dev_free(struct mtu_netplan_dev *d);

/* Parses one netplan file and finds the definition that configures iface:
 * its ID is iface and it has no match:, or its match: has only name: (a
 * glob) that matches iface and no set-name: or set-name: iface. Returns 1
 * found, 0 none, -EINVAL with *err when the file does not parse or a
 * definition might configure iface but cannot be told (match: by MAC or
 * driver, two definitions). */
int mtu_netplan_find(const char *text, const char *iface, struct mtu_netplan_dev *dev, char **err);
/* The definitions of a file written by us (all of them, mtu set);
 * -EINVAL with *err when it does not parse or holds more than we write. */
int mtu_netplan_ours(const char *text, struct mtu_netplan_dev **v, size_t *n, char **err);
/* Writes our netplan file: header, version 2, each definition's
 * renderer at its level and mtu. */
void mtu_netplan_write(const struct mtu_netplan_dev *v, size_t n, const char *header, struct strbuf *out);

#endif
