def pytest_addoption(parser):
    parser.addoption("--bin_dir", required=True,
                     help="directory of plrank-server, plrank-train, ...")
    parser.addoption("--protoc", required=True, help="protoc to generate "
                     "the protocol's Python messages with")
    parser.addoption("--proto_root", required=True,
                     help="the source tree's proto/ directory")
