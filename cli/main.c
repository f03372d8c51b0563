/* zkpipe: the command-line front end. Dispatches to one function per subcommand (cli/commands.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"prove", zkpipe_cmd_prove, "prove <circuit.zkey> <witness.wtns> <proof.json> <public.json>: one-shot proof"},
#ifdef ZK_HAVE_JSONC
    {"verify", zkpipe_cmd_verify, "verify <vk.json|circuit.zkey> <public.json> <proof.json>: check a Groth16 proof"},
#endif
    {"keygen", zkpipe_cmd_keygen, "keygen --insecure-dev <circuit.r1cs> <out.zkey> [<vk.json>]: test-only key"},
    /* further subcommands are added here, one line each */
#ifdef ZKPIPE_WITGEN
    {"witness", zkpipe_cmd_witness, "witness <circuit.wasm> <input.json> <out.wtns>: = snarkjs wtns calculate"},
    {"fullprove", zkpipe_cmd_fullprove, "fullprove <input.json> <circuit.wasm> <circuit.zkey> <proof.json> <public.json>"},
#endif
#ifdef ZKPIPE_PIPELINE
    {"submit", zkpipe_cmd_submit, "submit --circuit NAME [--priority P] W1.wtns ...: queue a job, print its id"},
    {"wait", zkpipe_cmd_wait, "wait JOB: block until the job ends; exit 0 done, 1 failed, 2 bad usage"},
    {"status", zkpipe_cmd_status, "status [JOB]: slabs, stages, counters and jobs of the pipeline"},
    {"cancel", zkpipe_cmd_cancel, "cancel JOB: drop the job's partitions at their next step"},
    {"trace", zkpipe_cmd_trace, "trace --out FILE: the event ring as a Chrome/Perfetto trace"},
    {"metrics", zkpipe_cmd_metrics, "metrics: the pipeline's numbers as Prometheus text (format 0.0.4)"},
    {"top", zkpipe_cmd_top, "top [--interval S]: a live view of slabs, stages, queues and jobs; q quits"},
    {"advise", zkpipe_cmd_advise, "advise: which of [synth] instances, slabs, finalizer instances to raise, from the histograms"},
    {"plan", zkpipe_cmd_plan, "plan: the memory each stage will hold for the ini's circuits, and whether the machine has it"},
    {"replay", zkpipe_cmd_replay, "replay prepare --circuit NAME W1.wtns ...: fill the replay backend's results cache"},
#ifdef ZKPIPE_WITGEN
    {"witgen", zkpipe_cmd_witgen, "witgen build [CIRCUIT...]: compile the circuits' wasm generators into the cache"},
#endif
    {"setup", zkpipe_cmd_setup, "setup: create the shared segment and spool from the ini, or check its geometry"},
#endif
#ifdef ZKPIPE_FLEET
    {"db", zkpipe_cmd_db, "db init --dsn DSN: create or migrate the fleet queue's schema (docs/fleet.md)"},
#endif
};

static void usage(FILE *f) {
    fprintf(f, "Usage: zkpipe <command> [options] [args]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'zkpipe <command> --help' for a command's options.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("zkpipe %s\n", ZKPIPE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "zkpipe: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
