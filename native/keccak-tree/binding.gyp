{
  "targets": [
    {
      "target_name": "keccak_tree",
      "sources": ["src/keccak_tree.c"],
      "cflags": ["-O3", "-fPIC", "-Wall"],
      "xcode_settings": {
        "OTHER_CFLAGS": ["-O3", "-fPIC", "-Wall"]
      }
    }
  ]
}
