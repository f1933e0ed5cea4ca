#!/usr/bin/env bash
# Prints the path of tiny Shakespeare (1,115,394 characters, the standard
# char-level corpus), finding or fetching it in this order:
#   1. --data-dir DIR, or $TINYGPT_DATA_DIR: DIR/tinyshakespeare.txt
#   2. ../shared/data/tinyshakespeare.txt beside the project root (our CI and dev machines)
#   3. data/tinyshakespeare.txt in the project, downloading it there with curl
#      from Karpathy's char-rnn repository when it is missing.
# `tinygpt train` looks in the same places (1 and 2), so both agree on the file.
set -euo pipefail

readonly FILE_NAME=tinyshakespeare.txt
readonly SOURCE_URL=https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt
readonly EXPECTED_SHA256=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed
project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

data_dir=${TINYGPT_DATA_DIR:-}
while [[ $# -gt 0 ]]; do
  case $1 in
    --data-dir) [[ $# -ge 2 ]] || { echo "data.sh: --data-dir needs a directory" >&2; exit 2; }
                data_dir=$2; shift 2 ;;
    -h|--help)  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)          echo "data.sh: unknown argument '$1' (usage: data.sh [--data-dir DIR])" >&2; exit 2 ;;
  esac
done

if [[ -n $data_dir ]]; then
  if [[ ! -f $data_dir/$FILE_NAME ]]; then
    echo "data.sh: $data_dir/$FILE_NAME does not exist" >&2
    exit 1
  fi
  echo "$data_dir/$FILE_NAME"
  exit 0
fi

shared_copy=$project_root/../shared/data/$FILE_NAME
if [[ -f $shared_copy ]]; then
  echo "$(cd "$(dirname "$shared_copy")" && pwd)/$FILE_NAME"
  exit 0
fi

local_copy=$project_root/data/$FILE_NAME
if [[ ! -f $local_copy ]]; then
  mkdir -p "$project_root/data"
  echo "data.sh: downloading tiny Shakespeare from $SOURCE_URL" >&2
  # Download beside the target and rename, so an interrupted download leaves nothing behind.
  curl --fail --silent --show-error --location --output "$local_copy.part" "$SOURCE_URL"
  actual_sha256=$(sha256sum "$local_copy.part" | cut -d' ' -f1)
  if [[ $actual_sha256 != "$EXPECTED_SHA256" ]]; then
    rm -f "$local_copy.part"
    echo "data.sh: the download has sha256 $actual_sha256, expected $EXPECTED_SHA256" >&2
    exit 1
  fi
  mv "$local_copy.part" "$local_copy"
fi
echo "$local_copy"
