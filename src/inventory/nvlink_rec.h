/* NVML's NVLinks per GPU as `gpuready snapshot` records them in
 * .gpuready/nvlink (docs/snapshot-layout.md), for a recorded tree, where
 * NVML cannot be asked: bench copy's peer limits read them there. */
#ifndef GPUREADY_INVENTORY_NVLINK_REC_H
#define GPUREADY_INVENTORY_NVLINK_REC_H

#include "core/root.h"
#include "core/strbuf.h"
#include "inventory/gpu_live.h"

#define NVLINK_REC_FILE "/.gpuready/nvlink"

/* The file's text for NVML's answers: a # line, then per GPU
 * "BDF LINKS DOWN VERSION", VERSION "-" when unknown. */
void nvlink_rec_format(const struct nvml_info *nv, struct strbuf *out);
void nvlink_rec_parse(const char *text, size_t len, struct nvlink_rec_info *out);
/* Reads NVLINK_REC_FILE under a recorded root (not known on the live one,
 * where NVML itself answers); 0 always, *out says what it found. */
int nvlink_rec_load(const struct root *r, struct nvlink_rec_info *out);
void nvlink_rec_free(struct nvlink_rec_info *info);
/* The line of the GPU at bdf, or NULL. */
const struct nvlink_rec *nvlink_rec_find(const struct nvlink_rec_info *info, const char *bdf);

#endif
