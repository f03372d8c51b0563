/* zkpipe metrics: the pipeline's numbers in the Prometheus text exposition format 0.0.4 on stdout,
 * the same text as zkpipe-exporter's /metrics (one generator: exporter/observe.c). With no segment
 * it prints zkpipe_segment_up 0 and exits 0; a segment that cannot be read exits 1. */
#include <stdio.h>

#include "client.h"
#include "commands.h"
#include "exporter/nvml.h"
#include "exporter/observe.h"

#define METRICS_USAGE "zkpipe metrics [--config FILE]"

int zkpipe_cmd_metrics(int argc, char **argv) {
    const char *config;
    int parsed = cli_options(argc, argv, METRICS_USAGE,
                             "Prints the Prometheus text exposition (0.0.4) of the pipeline's segment: counters, "
                             "gauges and\nthe stages' histograms (docs/observe.md).",
                             NULL, &config);
    if (parsed >= 0) return parsed;
    if (optind < argc) return cli_usage_error(METRICS_USAGE);
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    shm_t s;
    int att = cli_attach(&c, &s, false);
    if (att < 0) return 1;
    nvml_init();
    if (att == 0)
        obs_metrics_absent(stdout, nvml_metrics);
    else
        obs_metrics(&s, stdout, nvml_metrics);
    if (att == 1) shm_close(&s);
    return fflush(stdout) == 0 ? 0 : 1;
}
