"""A script that wants a command-line argument before it calls anything."""

import argparse

import torch


def add_one(x):
    return x + 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("size", type=int)
    args = parser.parse_args()
    add_one(torch.ones(args.size))
