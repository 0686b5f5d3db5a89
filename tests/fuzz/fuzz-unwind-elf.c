/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for what the unwinder reads from ELF files: any bytes
 * are parsed as a mapped file by the model's ELF reader (segments,
 * sections, .eh_frame_hdr, build-id, debuglink); .eh_frame is indexed when there is no header; .debug_frame is
 * converted; the images libunwind would read are built; and rows are
 * compiled for addresses across the file's code and at every FDE, so
 * AddressSanitizer sees every read the parsers let through.  See
 * tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "prunwind.h"
#include "unwind-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch_rule(const struct uw_rule *r)
{
	sink += r->lo + r->hi + (uint64_t)r->cfa_off + (uint64_t)r->ra_off + r->usable;
}

static void rules_over(struct pr_unwinder *u, struct uw_elf *e)
{
	uint64_t span = e->img->text_hi - e->img->text_lo;
	struct uw_rule r;

	/* Across the code, and just outside it. */
	for (uint64_t i = 0; i <= 64; i++) {
		uint64_t addr = e->img->text_lo + (span / 64) * i;

		if (!uw_rule_find(u, e, addr, &r))
			return;
		touch_rule(&r);
		if (!uw_rule_find(u, e, addr - 1, &r))
			return;
		touch_rule(&r);
	}
	/* At every FDE of a table we built, and one byte in. */
	for (size_t i = 0; i < e->eh.nr && i < 4096; i++) {
		uint64_t addr = e->img->text_lo + (uint64_t)(int64_t)e->eh.index[i].start;

		if (!uw_rule_find(u, e, addr, &r) || !uw_rule_find(u, e, addr + 1, &r))
			return;
		touch_rule(&r);
	}
}

static void images_of(const struct uw_cfi_table *t)
{
	size_t size, at;
	unsigned char *img = uw_cfi_image(t, 0x1000, &size, &at);

	if (img) {
		for (size_t i = 0; i < size; i += 64)
			sink += img[i];
		free(img);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pr_model *model;
	static struct pr_unwinder *u;
	struct pr_elf *img;
	struct uw_elf *e;

	if (!model) {
		model = pr_model_new(NULL);
		u = model ? pr_unwinder_new(model, NULL) : NULL;
		if (!u)
			abort();
	}
	img = pr__elf_from_memory(data, size, "fuzz", NULL);
	if (!img)
		return 0;
	e = uw_elf_new(img, NULL);
	if (!e) {
		pr__elf_free(img);
		return 0;
	}
	/* .debug_frame from the file itself only: no looking on disk. */
	uw_cfi_load_debug_frame(e, img, NULL);
	e->dbg_tried = true;
	images_of(&e->eh);
	images_of(&e->dbg);
	rules_over(u, e);
	for (uint64_t off = 0; off < 4096; off += 8) {
		uint64_t v;

		if (!pr__elf_read(img, img->text_lo + off, off & 8, &v))
			sink += v;
	}
	uw_elf_free(e);
	pr__elf_free(img);
	return 0;
}
