/*
 * The fuzz targets without libFuzzer: a main that feeds every file of the
 * directories (or files) it is given to LLVMFuzzerTestOneInput once.  Every
 * build links each target with it, and `make check` runs it over the seed
 * corpus (tests/fuzz-corpus.sh), so that a target that no longer compiles,
 * or a corpus input that now crashes, fails the ordinary tests too and not
 * only a fuzzing build.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
replay_file(const char *path)
{
	FILE		*f;
	uint8_t		*buf;
	long		 len;

	if ((f = fopen(path, "rb")) == NULL) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) == -1 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) == -1) {
		perror(path);
		fclose(f);
		return -1;
	}
	/* One byte more, so that an empty input is a valid pointer too. */
	if ((buf = malloc((size_t)len + 1)) == NULL ||
	    fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*dir;
	char		 path[4096];
	int		 i, n = 0;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &sb) == -1) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (replay_file(argv[i]) == -1)
				return 1;
			n++;
			continue;
		}
		if ((dir = opendir(argv[i])) == NULL) {
			perror(argv[i]);
			return 1;
		}
		while ((de = readdir(dir)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
			    de->d_name);
			if (replay_file(path) == -1) {
				closedir(dir);
				return 1;
			}
			n++;
		}
		closedir(dir);
	}
	printf("%s: %d inputs\n", argv[0], n);
	return n > 0 ? 0 : 1;
}
