/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the jitdump reader: any bytes are a jitdump,
 * read whole from a file and again fed in two pieces (a runtime still
 * writing it), then every code's name, bytes, lines and unwind data are
 * touched, so AddressSanitizer sees any read past what a record holds.
 * See tests/fuzz/README.md.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/jitdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void use(struct pr_jitdump *jd)
{
	for (size_t i = 0; i < jd->nr_codes; i++) {
		const struct jd_code *c = &jd->codes[i];
		const struct jd_code *found;
		uint32_t line;
		const char *file;

		sink += strlen(pr__jitdump_str(jd, c->name));
		for (uint64_t k = 0; k < c->size; k++)
			sink += jd->buf[c->code + k];
		for (uint64_t k = 0; k < c->unwind_size; k++)
			sink += jd->buf[c->unwind + k];
		found = pr__jitdump_find(jd, c->addr + c->size / 2);
		if (found) {
			file = pr__jitdump_line(jd, found, c->addr + c->size / 2, &line);
			sink += (file ? strlen(file) : 0) + line;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pr_jitdump jd = { 0 };
	size_t cut = size ? data[0] * size / 256 : 0;
	int fd = memfd_create("fuzz-jitdump", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	pr__jitdump_read_fd(&jd, fd, "fuzz", NULL);
	use(&jd);
	pr__jitdump_clear(&jd);
	close(fd);
	pr__jitdump_feed(&jd, data, cut, "fuzz", NULL);
	pr__jitdump_feed(&jd, data + cut, size - cut, "fuzz", NULL);
	use(&jd);
	pr__jitdump_clear(&jd);
	return 0;
}
