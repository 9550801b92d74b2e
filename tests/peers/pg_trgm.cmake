# The pg_trgm peer (scripts/hdb/peers/pg_trgm.py, docs/peers.md "pg_trgm"): the export against
# hdb-ngram-cpu, a throwaway cluster's answers verified and torn down (also on SIGTERM/SIGINT), the
# skip without PostgreSQL. Label `peers`; about 30 s. Included by tests/peers/CMakeLists.txt.
if(TARGET hdb-export-ngram AND TARGET hdb-ngram-cpu)
  add_test(NAME peers.pg_trgm
           COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/hdb/python ${CMAKE_CURRENT_LIST_DIR}/test_pg_trgm_peer.py)
  set_tests_properties(peers.pg_trgm PROPERTIES LABELS "peers" TIMEOUT 300
                       ENVIRONMENT "HDB_BUILD_DIR=${CMAKE_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1")
endif()
