{
  "variables": {
    "blst_dir": "../../node_modules/blst-sources/blst"
  },
  "targets": [
    {
      "target_name": "blst_minsig",
      "sources": [
        "src/blst_minsig.c",
        "<(blst_dir)/src/server.c",
        "<(blst_dir)/build/assembly.S"
      ],
      "include_dirs": ["<(blst_dir)/bindings"],
      "defines": ["__BLST_PORTABLE__"],
      "cflags": ["-O2", "-fno-builtin", "-fPIC", "-Wall", "-Wno-unused-function"],
      "xcode_settings": {
        "OTHER_CFLAGS": ["-O2", "-fno-builtin", "-fPIC", "-Wall", "-Wno-unused-function"]
      }
    }
  ]
}
