from agentfootprint.cli import main

main()
