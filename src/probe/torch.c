/* PyTorch as operators check it by hand: `import torch; torch.cuda.is_available()`
 * and the device count, plus NCCL availability and version.
 *
 * The interpreter is --python, else $VIRTUAL_ENV/bin/python, else the
 * /opt/pytorch-venv/bin/python, else python3 on PATH. The probe
 * runs through core/spawn with a deadline (importing torch and
 * initialising CUDA on 8 GPUs takes seconds; 120 s is the limit) and
 * prints one JSON object, parsed with json-c. Live only.
 *
 * That deadline is what keeps a Python blocked in the driver (a GPU fallen
 * off the bus) from hanging `check`, as isolate.h's does for NVML and CUDA;
 * a Python stuck inside a system call that SIGKILL cannot end is left
 * behind after SPAWN_REAP_MS (spawn.h), as isolate.c leaves such a child. */
#include "probe.h"
#include "core/cleanup.h"
#include "core/spawn.h"
#include "core/strbuf.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TORCH_TIMEOUT_MS 120000

static const char probe[] =
	"import json, sys\n"
	"r = {}\n"
	"try:\n"
	"    import torch\n"
	"except Exception as e:\n"
	"    print(json.dumps({'error': 'import torch: %s' % e})); sys.exit(0)\n"
	"r['torch'] = torch.__version__\n"
	"r['cuda_version'] = torch.version.cuda\n"
	"r['cuda_available'] = bool(torch.cuda.is_available())\n"
	"r['device_count'] = torch.cuda.device_count()\n"
	"try:\n"
	"    import torch.distributed as dist\n"
	"    r['nccl_available'] = bool(dist.is_nccl_available())\n"
	"    v = torch.cuda.nccl.version()\n"
	"    r['nccl'] = '.'.join(map(str, v)) if isinstance(v, tuple) else str(v)\n"
	"except Exception as e:\n"
	"    r.setdefault('nccl_available', False)\n"
	"print(json.dumps(r))\n";


static char *jdup(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return xstrdup(json_object_get_string(v));
}

static int jbool(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_boolean(v) : -1;
}

static void parse(struct torch_info *t, const char *out)
{
	/* the JSON is the last line; libraries may print warnings first */
	const char *last = out, *p;
	while ((p = strchr(last, '\n')) && p[1])
		last = p + 1;
	json_object *o = json_tokener_parse(last);
	if (!o || !json_object_is_type(o, json_type_object)) {
		t->why = xasprintf("the probe printed no result: %.200s", out);
		json_object_put(o);
		return;
	}
	char *err = jdup(o, "error");
	if (err) {
		t->why = err;
	} else {
		t->ok = true;
		t->torch_version = jdup(o, "torch");
		t->cuda_version = jdup(o, "cuda_version");
		t->nccl_version = jdup(o, "nccl");
		t->cuda_available = jbool(o, "cuda_available");
		t->nccl_available = jbool(o, "nccl_available");
		json_object *v;
		t->device_count = json_object_object_get_ex(o, "device_count", &v) ? json_object_get_int(v) : -1;
	}
	json_object_put(o);
}

int torch_load(const char *python, struct torch_info *t)
{
	t->cuda_available = t->nccl_available = t->device_count = -1;
	t->python = spawn_find_python(python);
	const char *argv[] = { t->python, "-c", probe, NULL };
	struct spawn_result res;
	int e = spawn_run(argv, NULL, TORCH_TIMEOUT_MS, &res);
	if (e < 0) {
		t->why = xasprintf("%s: %s", t->python, strerror(-e));
		return 0;
	}
	t->probed = true;
	if (res.abandoned)
		t->why = xasprintf("%s did not finish in %d s and could not be stopped (stuck in the kernel, as a "
				   "process in a call into a GPU driver that no longer answers is): abandoned",
				   t->python, TORCH_TIMEOUT_MS / 1000);
	else if (res.timed_out)
		t->why = xasprintf("%s did not finish in %d s (killed)", t->python, TORCH_TIMEOUT_MS / 1000);
	else if (res.exit_code != 0)
		t->why = xasprintf("%s exited with %d: %.300s", t->python, res.exit_code, res.err.buf);
	else
		parse(t, res.out.buf);
	spawn_result_free(&res);
	return 0;
}

void torch_free(struct torch_info *t)
{
	if (!t)
		return;
	free(t->python), free(t->why), free(t->torch_version), free(t->cuda_version), free(t->nccl_version);
	memset(t, 0, sizeof(*t));
}
