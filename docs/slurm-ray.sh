#!/usr/bin/env bash
# playforge on a Slurm allocation through Ray, after the recipe of Ray's documentation
# ("Deploying on Slurm"): one Ray head on the first node, one Ray worker per other node, then
# the command with `--ray auto` on the head. The checkout (with `bash python/setup.sh` run once)
# must be on a file system every node sees, at the same path.
#   sbatch docs/slurm-ray.sh personas configs/personas_paper.toml
#SBATCH --job-name=playforge
#SBATCH --nodes=4
#SBATCH --exclusive
#SBATCH --tasks-per-node=1
#SBATCH --time=24:00:00
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
RAY=.venv/bin/ray
nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
head=${nodes[0]}
head_ip=$(srun --nodes=1 --ntasks=1 -w "$head" hostname --ip-address | awk '{print $1}')
port=6379
srun --nodes=1 --ntasks=1 -w "$head" $RAY start --head --node-ip-address="$head_ip" --port=$port \
    --num-cpus="$SLURM_CPUS_ON_NODE" --block &
sleep 10
for node in "${nodes[@]:1}"; do
    srun --nodes=1 --ntasks=1 -w "$node" $RAY start --address="$head_ip:$port" --num-cpus="$SLURM_CPUS_ON_NODE" --block &
    sleep 2
done
RAY_ADDRESS="$head_ip:$port" .venv/bin/playforge "$@" --ray auto
