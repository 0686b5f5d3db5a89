/* SPDX-License-Identifier: Apache-2.0 */
/* One public header, PR_HEADER, compiled alone as strict C99 (-std=c99
 * -pedantic -Werror, tests/meson.build builds one per header): each header
 * includes what it uses, so an embedder can include just the one it needs. */
#include PR_HEADER

int main(void)
{
	return 0;
}
